package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.client.KvsClient;
import io.kvs.client.NotAppliedException;
import io.kvs.client.OutcomeUnknownException;
import io.kvs.client.ScanStream;
import io.kvs.core.cluster.RegionDescriptor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 29's concurrent counter and scan streams through a planned move and a failover. First a
 * scan stream and a reverse one are opened over 2,000 pairs and read in part; the region is moved
 * to another primary ({@code ./kvs admin move}), and they are read further. Then N clients each add
 * 1 to one counter M times while the counter's primary is killed (SIGKILL) and a backup promoted;
 * the streams are read to their ends after: each returned every pair exactly once, in key order
 * (the reverse one in descending order).
 *
 * <p>The counter: an increment whose reply the kill took is sent again under its write id, which
 * every replica kept with the write, and the new primary answers it as the first attempt was: the
 * counter ends at exactly N·M, and the values the increments returned are exactly 1..N·M (an
 * increment applied twice would leave a gap and overshoot; one answered from the wrong write, a
 * duplicate). Each client is a KvsClient of its own (its own client id).
 */
class CounterFailoverIT {
  private static final int CLIENTS = 4;
  private static final int INCREMENTS = 250;
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(10);
  private static final byte[] COUNTER = "counter".getBytes(StandardCharsets.UTF_8);
  private static final int STREAMED = 2_000;

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  @Test
  void concurrentIncrementsThroughAFailoverAddUpExactly() throws Exception {
    // Small L0s, filled before the increments start: the region has levels (which verify
    // compares), so the promoted backup's write ids start at a horizon above 0; the increments'
    // few bytes switch no L0 meanwhile, so every id past it is known (a retry it could not decide
    // would end OutcomeUnknown, which this test counts as a failure).
    try (ProcessCluster cluster =
        ProcessCluster.start(
            dir.resolve("cluster"),
            "--servers",
            "3",
            "--regions",
            "1",
            "--replication",
            "3",
            "--balancer",
            "off",
            "--l0-size",
            ProcessCluster.SMALL_L0)) {
      List<KvsClient> clients = new ArrayList<>();
      ExecutorService threads = Executors.newFixedThreadPool(CLIENTS);
      try (KvsClient observer = cluster.client(OPERATION_TIMEOUT)) {
        ProcessCluster.awaitFullStrength(observer, 1, 3, Duration.ofSeconds(60));
        Bulk.fillLevels(observer, "levels", 1);
        List<String> streamedKeys = new ArrayList<>();
        for (int i = 0; i < STREAMED; i++) {
          streamedKeys.add(String.format("stream/%05d", i));
          observer.put(bytes(streamedKeys.get(i)), bytes("v" + i));
        }
        List<String> streamed = new ArrayList<>();
        ScanStream stream = observer.scanStream(bytes("stream/"), bytes("stream0"), 40);
        read(stream, 600, streamed);
        List<String> reversed = new ArrayList<>();
        ScanStream down = observer.reverseScanStream(bytes("stream/"), bytes("stream0"), 40);
        read(down, 600, reversed);
        RegionDescriptor moved = observer.regionMap().regionFor(COUNTER).orElseThrow();
        String target = moved.backups().get(0);
        cluster.admin("move", Long.toString(moved.id()), target);
        ProcessCluster.awaitCondition(
            "region " + moved.id() + " led by " + target,
            Duration.ofSeconds(60),
            () -> {
              RegionDescriptor now = observer.regionMap().regionFor(COUNTER).orElseThrow();
              return now.primary().equals(target) && now.joining().isEmpty();
            });
        read(stream, 600, streamed);
        read(down, 600, reversed);
        RegionDescriptor before = observer.regionMap().regionFor(COUNTER).orElseThrow();
        for (int i = 0; i < CLIENTS; i++) {
          clients.add(cluster.client(OPERATION_TIMEOUT));
        }
        Set<Long> returned = ConcurrentHashMap.newKeySet();
        AtomicInteger duplicates = new AtomicInteger();
        AtomicInteger unknown = new AtomicInteger();
        AtomicLong done = new AtomicLong();
        List<Future<?>> running = new ArrayList<>();
        for (KvsClient client : clients) {
          running.add(
              threads.submit(
                  () -> {
                    for (int i = 0; i < INCREMENTS; i++) {
                      while (true) {
                        try {
                          if (!returned.add(client.increment(COUNTER, 1))) {
                            duplicates.incrementAndGet();
                          }
                          done.incrementAndGet();
                          break;
                        } catch (OutcomeUnknownException e) {
                          unknown.incrementAndGet();
                          System.out.println("CounterFailoverIT: " + e.getMessage());
                          break;
                        } catch (NotAppliedException e) {
                          // Surely not applied (no primary within the timeout): again.
                        }
                      }
                    }
                    return null;
                  }));
        }
        ProcessCluster.awaitCondition(
            "a fifth of the increments done", Duration.ofSeconds(60), () -> done.get() >= 200);
        long atKill = done.get();
        cluster.inject("kill", before.primary());
        ProcessCluster.awaitMovedOn(observer, before.primary(), Duration.ofSeconds(30));
        for (Future<?> thread : running) {
          thread.get();
        }
        read(stream, Integer.MAX_VALUE, streamed);
        assertThat(streamed).as("the scan stream's keys").isEqualTo(streamedKeys);
        read(down, Integer.MAX_VALUE, reversed);
        List<String> descending = new ArrayList<>(streamedKeys);
        Collections.reverse(descending);
        assertThat(reversed).as("the reverse scan stream's keys").isEqualTo(descending);
        RegionDescriptor after = observer.regionMap().regionFor(COUNTER).orElseThrow();
        long total = (long) CLIENTS * INCREMENTS;
        byte[] counter = observer.get(COUNTER).orElseThrow();
        long value = ByteBuffer.wrap(counter).order(ByteOrder.LITTLE_ENDIAN).getLong();
        System.out.printf(
            "CounterFailoverIT: scan streams of %d pairs through a move to %s and the kill: %d"
                + " returned, %d in reverse; %d clients x %d increments, primary %s killed at about %d done,"
                + " %s leads at epoch %d; counter %d, %d distinct results, %d duplicates, %d"
                + " unknown%n",
            STREAMED,
            target,
            streamed.size(),
            reversed.size(),
            CLIENTS,
            INCREMENTS,
            before.primary(),
            atKill,
            after.primary(),
            after.epoch(),
            value,
            returned.size(),
            duplicates.get(),
            unknown.get());
        assertThat(after.primary()).isNotEqualTo(before.primary());
        assertThat(unknown.get()).as("increments whose outcome stayed unknown").isZero();
        assertThat(duplicates.get()).as("results returned twice").isZero();
        assertThat(value).isEqualTo(total);
        assertThat(returned)
            .containsExactlyInAnyOrderElementsOf(LongStream.rangeClosed(1, total).boxed().toList());
        cluster.inject("restart", before.primary());
        ProcessCluster.awaitFullStrength(observer, 1, 3, Duration.ofSeconds(90));
        cluster.verify();
      } finally {
        threads.shutdownNow();
        for (KvsClient client : clients) {
          client.close();
        }
      }
    }
  }

  /** Reads at most {@code count} keys of {@code stream} into {@code into}. */
  private static void read(ScanStream stream, int count, List<String> into) {
    for (int i = 0; i < count && stream.hasNext(); i++) {
      into.add(new String(stream.next().key(), StandardCharsets.UTF_8));
    }
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
