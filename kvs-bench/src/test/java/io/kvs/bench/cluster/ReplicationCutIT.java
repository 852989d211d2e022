package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.History;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.Operation;
import io.kvs.bench.history.Verdict;
import io.kvs.client.KvsClient;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.tools.fault.NetworkCut;
import io.kvs.tools.fault.ProcessSockets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * A primary cut off from one of its backups (iptables drops its traffic to every port of that
 * backup's process, {@link NetworkCut}) while a pipelined writer of large values keeps its
 * replication busy: the bytes it posts to the cut backup stay unacknowledged and the stream stalls.
 * The region must go on with its other backup: the stream to the cut one fails after the stall
 * timeout (2 s), the server announces it, and the master reopens the region with it joining -- all
 * within a few seconds, not the 10 s replication timeout.
 *
 * <p>Checked: the loaded region never went longer than {@link #LONGEST_GAP} without a successful
 * operation during the cut; the master reopened it with the cut backup joining; the recorded
 * history is linearizable with no acknowledged write lost; the group is whole again after the cut
 * heals, and {@code LocalCluster verify} passes with data in every region's device levels. (It does
 * not fill the cut connection's transmit queue: the one-sided writes in flight to one backup are
 * bounded below that, so it passes on a replication thread that would wait for room too.)
 */
class ReplicationCutIT {
  private static final int REGIONS = 2;
  private static final int KEYS = 20;
  private static final int CLIENTS = 4;
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(5);
  private static final Duration AWAIT = Duration.ofSeconds(120);

  /** The stall timeout (2 s), the master's reopen and a client's retry, with room for a slow CI. */
  private static final Duration LONGEST_GAP = Duration.ofMillis(5_000);

  /** The bulk writer's values: large, so that the cut connection's queues fill fast. */
  private static final int BULK_VALUE_BYTES = 60_000;

  private static final int BULK_IN_FLIGHT = 128;

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  @Test
  void aPrimaryCutOffFromOneBackupGoesOnWithTheOtherWithinSeconds() throws Exception {
    assertThat(NetworkCut.unavailable()).as("cutting a process's traffic (iptables)").isEmpty();
    try (ProcessCluster cluster =
        ProcessCluster.start(
            dir.resolve("cluster"),
            "--servers",
            "3",
            "--regions",
            Integer.toString(REGIONS),
            "--replication",
            "3",
            "--l0-size",
            ProcessCluster.SMALL_L0)) {
      HistoryRecorder recorder = new HistoryRecorder(1 << 20);
      long longestGap;
      RegionDescriptor region;
      String cutBackup;
      try (KvsClient client = cluster.client(OPERATION_TIMEOUT);
          KvsClient bulkClient = cluster.client(OPERATION_TIMEOUT)) {
        ProcessCluster.awaitFullStrength(client, REGIONS, 3, Duration.ofSeconds(60));
        Bulk.fillLevels(client, "levels", REGIONS);
        region = client.regionMap().regionFor(RecordedLoad.key("history", 0)).orElseThrow();
        cutBackup = region.backups().get(0);
        RegionMap before = client.regionMap();
        RecordedLoad load =
            RecordedLoad.startIndependent(
                client,
                () -> cluster.client(OPERATION_TIMEOUT),
                recorder,
                CLIENTS,
                "history",
                KEYS,
                OPERATION_TIMEOUT);
        load.awaitMore(200, AWAIT);
        AtomicBoolean writing = new AtomicBoolean(true);
        Thread bulk = new Thread(() -> writeBulk(bulkClient, region.id(), writing), "bulk");
        bulk.start();
        long cutAt;
        long healedAt;
        NetworkCut cut =
            NetworkCut.cut(
                cluster.process("server-" + region.primary()),
                ProcessSockets.listeningPorts(cluster.process("server-" + cutBackup).pid()));
        cutAt = System.nanoTime();
        try {
          ProcessCluster.awaitCondition(
              "region " + region.id() + " reopened with " + cutBackup + " joining",
              Duration.ofSeconds(60),
              () ->
                  client
                      .regionMap()
                      .byId(region.id())
                      .map(
                          now ->
                              now.epoch() > before.byId(region.id()).orElseThrow().epoch()
                                  && now.joining().contains(cutBackup))
                      .orElse(false));
          load.awaitMore(200, AWAIT);
        } finally {
          cut.close();
          healedAt = System.nanoTime();
          writing.set(false);
        }
        bulk.join();
        // The reopen above raised the epoch with the cut backup joining: whole again once it
        // caught up.
        ProcessCluster.awaitFullStrength(client, REGIONS, 3, Duration.ofSeconds(90));
        load.awaitMore(100, AWAIT);
        load.finish();
        longestGap =
            longestGap(recorder.history(), client.regionMap(), region.id(), cutAt, healedAt);
      }
      History history = recorder.history();
      Verdict verdict = RecordedLoad.check(history, dir.resolve("history.jsonl"));
      System.out.printf(
          "ReplicationCutIT (region %d: %s cut off from %s): %d operations, longest stretch"
              + " without a success during the cut %d ms; %s%n",
          region.id(),
          region.primary(),
          cutBackup,
          history.size(),
          longestGap / 1_000_000,
          verdict.summary());
      assertThat(Duration.ofNanos(longestGap))
          .as("the longest the cut region served no one")
          .isLessThan(LONGEST_GAP);
      assertThat(verdict.isLinearizable()).as(verdict.describe()).isTrue();
      assertThat(verdict.lostWrites()).isEmpty();
      cluster.verify();
    }
  }

  /**
   * Pipelined puts of large values to keys of region {@code regionId} until {@code writing} ends.
   */
  private static void writeBulk(KvsClient client, long regionId, AtomicBoolean writing) {
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; keys.size() < 64; i++) {
      byte[] key = TestKeys.key("bulk", i);
      if (client.regionMap().regionFor(key).map(r -> r.id() == regionId).orElse(false)) {
        keys.add(key);
      }
    }
    byte[] value = new byte[BULK_VALUE_BYTES];
    Arrays.fill(value, (byte) 'b');
    List<CompletableFuture<Void>> inFlight = new ArrayList<>();
    for (int i = 0; writing.get(); i++) {
      inFlight.add(client.putAsync(keys.get(i % keys.size()), value).exceptionally(e -> null));
      if (inFlight.size() == BULK_IN_FLIGHT) {
        CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).join();
        inFlight.clear();
      }
    }
    CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).join();
  }

  /**
   * The longest stretch between {@code from} and {@code to} in which no operation on region {@code
   * regionId} completed successfully.
   */
  private static long longestGap(
      History history, RegionMap map, long regionId, long from, long to) {
    long[] successes =
        history.operations().stream()
            .filter(op -> op.outcome() == Operation.Outcome.OK)
            .filter(
                op -> map.regionFor(op.key().toArray()).map(r -> r.id() == regionId).orElse(false))
            .mapToLong(Operation::completeNanos)
            .filter(at -> at >= from && at <= to)
            .sorted()
            .toArray();
    long longest = 0;
    long last = from;
    for (long at : successes) {
      longest = Math.max(longest, at - last);
      last = at;
    }
    return Math.max(longest, to - last);
  }
}
