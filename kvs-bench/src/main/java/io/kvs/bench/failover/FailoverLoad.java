package io.kvs.bench.failover;

import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.Operation.Outcome;
import io.kvs.client.KvsClient;
import io.kvs.client.NotAppliedException;
import io.kvs.core.cluster.RegionMap;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * The failover benchmark's steady load: client threads writing (unique values), deleting and
 * reading a fixed set of keys spread over every region, every operation recorded in a history.
 * Counts acknowledged operations per second, and for each region the first write acknowledged that
 * was started after a given moment (the kill), which is when the region served again.
 */
final class FailoverLoad {
  /** Seconds of per-second counts kept; later operations are not counted. */
  private static final int SECONDS_MAX = 4 * 3600;

  private final KvsClient client;
  private final HistoryRecorder recorder;
  private final byte[][] keys;
  private final long[] regionOf;
  private final long started = System.nanoTime();
  private final AtomicLongArray perSecond = new AtomicLongArray(SECONDS_MAX);
  private final AtomicBoolean stop = new AtomicBoolean();
  private final List<Thread> threads = new ArrayList<>();
  private final ConcurrentHashMap<Long, Long> firstWrite = new ConcurrentHashMap<>();
  private volatile long watchFrom = Long.MAX_VALUE;
  // Nanoseconds between two operations a client starts (0: as fast as they complete).
  private final long periodNanos;

  /**
   * A load on {@code keyCount} keys; each client starts at most {@code ratePerClient} operations a
   * second (0: no bound), so that a run's history stays within its recorder's bound however long
   * the kills take.
   */
  FailoverLoad(
      KvsClient client, HistoryRecorder recorder, int keyCount, RegionMap map, int ratePerClient) {
    this.client = client;
    this.recorder = recorder;
    this.periodNanos = ratePerClient <= 0 ? 0 : 1_000_000_000L / ratePerClient;
    this.keys = new byte[keyCount][];
    this.regionOf = new long[keyCount];
    for (int i = 0; i < keyCount; i++) {
      // The first byte spreads the keys over the uniformly split key space (every region).
      byte[] suffix = ("failover-" + i).getBytes(StandardCharsets.UTF_8);
      byte[] key = new byte[suffix.length + 1];
      key[0] = (byte) (i * 256 / keyCount);
      System.arraycopy(suffix, 0, key, 1, suffix.length);
      keys[i] = key;
      regionOf[i] = map.regionFor(key).orElseThrow().id();
    }
  }

  void start(int clients) {
    for (int id = 0; id < clients; id++) {
      int clientId = id;
      Thread thread = new Thread(() -> run(clientId), "failover-client-" + id);
      thread.setDaemon(true);
      thread.start();
      threads.add(thread);
    }
  }

  /** Nanoseconds since the load started. */
  long now() {
    return System.nanoTime() - started;
  }

  /** From now on, records each region's first write started after {@code from} ({@link #now}). */
  void watchRegions(long from) {
    firstWrite.clear();
    watchFrom = from;
  }

  /**
   * When (since the start) the first write to {@code regionId} started after the watch mark was
   * acknowledged, or -1.
   */
  long firstWriteAfterWatch(long regionId) {
    return firstWrite.getOrDefault(regionId, -1L);
  }

  /** Operations acknowledged in each second since the start, up to {@code seconds}. */
  double[] perSecond(int seconds) {
    double[] counts = new double[Math.min(seconds, SECONDS_MAX)];
    for (int i = 0; i < counts.length; i++) {
      counts[i] = perSecond.get(i);
    }
    return counts;
  }

  /** Mean acknowledged operations per second over [{@code from}, {@code to}) nanoseconds. */
  double throughput(long from, long to) {
    int first = (int) Math.max(0, from / 1_000_000_000L);
    int last = (int) Math.min(SECONDS_MAX, Math.max(first + 1, to / 1_000_000_000L));
    long total = 0;
    for (int second = first; second < last; second++) {
      total += perSecond.get(second);
    }
    return (double) total / (last - first);
  }

  /** Reads every key once more (recorded), after the load stopped. */
  void finalReads(int client) {
    for (byte[] key : keys) {
      try {
        recorder.get(client, key, () -> this.client.get(key));
      } catch (Exception e) {
        // recorded as failed
      }
    }
  }

  private void run(int clientId) {
    Random random = new Random(clientId);
    HistoryRecorder.FailureClassifier classifier =
        e -> e instanceof NotAppliedException ? Outcome.FAILED_NOT_APPLIED : Outcome.UNKNOWN;
    long due = System.nanoTime();
    for (long sequence = 0; !stop.get(); sequence++) {
      if (periodNanos > 0) {
        // Paced, catching up after a stall at most one second's worth at once.
        due = Math.max(due + periodNanos, System.nanoTime() - 1_000_000_000L);
        long wait = due - System.nanoTime();
        if (wait > 0) {
          LockSupport.parkNanos(wait);
        }
      }
      int index = random.nextInt(keys.length);
      byte[] key = keys[index];
      int choice = random.nextInt(10);
      long invoked = now();
      try {
        if (choice < 5) {
          byte[] value =
              ("client " + clientId + " write " + sequence).getBytes(StandardCharsets.UTF_8);
          recorder.put(clientId, key, value, () -> client.put(key, value), classifier);
          wrote(index, invoked);
        } else if (choice < 6) {
          recorder.delete(clientId, key, () -> client.delete(key), classifier);
          wrote(index, invoked);
        } else {
          recorder.get(clientId, key, () -> client.get(key));
        }
        count();
      } catch (HistoryRecorder.HistoryFullException e) {
        stop.set(true);
      } catch (Exception e) {
        // recorded with its outcome: a failover makes some operations fail
      }
    }
  }

  private void wrote(int index, long invoked) {
    if (invoked >= watchFrom) {
      firstWrite.putIfAbsent(regionOf[index], now());
    }
  }

  private void count() {
    int second = (int) (now() / 1_000_000_000L);
    if (second < SECONDS_MAX) {
      perSecond.incrementAndGet(second);
    }
  }

  /** Stops the client threads and waits for them. */
  void stop() throws InterruptedException {
    stop.set(true);
    for (Thread thread : threads) {
      thread.join(60_000);
    }
  }
}
