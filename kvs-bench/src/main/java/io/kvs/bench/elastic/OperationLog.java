package io.kvs.bench.elastic;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Every client operation of the benchmark's load, bounded: when it started, how long it took,
 * whether it succeeded and which key it touched (a {@link LoadKeys} code), for the gaps measured
 * after the run; and the operations acknowledged in each second, kept however many are logged.
 * Appended by the client threads; read once they stopped.
 */
final class OperationLog {
  /** Seconds of per-second counts kept; later operations are not counted. */
  static final int SECONDS_MAX = 4 * 3600;

  private final long origin;
  // The wall clock at the origin, to place a moment of the log in the cluster's logs.
  private final long originWallMillis = System.currentTimeMillis();
  private final long[] started;
  // Microseconds the operation took; negative when it failed.
  private final int[] micros;
  private final int[] keyCodes;
  private final AtomicInteger size = new AtomicInteger();
  private final AtomicLongArray perSecond = new AtomicLongArray(SECONDS_MAX);

  /** A log of at most {@code capacity} operations, times in nanoseconds since {@code origin}. */
  OperationLog(int capacity, long origin) {
    this.origin = origin;
    this.started = new long[capacity];
    this.micros = new int[capacity];
    this.keyCodes = new int[capacity];
  }

  /** The wall clock (milliseconds since the epoch) at {@code nanos} since the origin. */
  long wallMillis(long nanos) {
    return originWallMillis + nanos / 1_000_000;
  }

  /** Nanoseconds since the origin. */
  long now() {
    return System.nanoTime() - origin;
  }

  /** Records one operation that started at {@code start} ({@link #now}) and ended now. */
  void record(long start, int keyCode, boolean ok) {
    record(start, now(), keyCode, ok);
  }

  /** Records one operation from {@code start} to {@code end} (tests give both). */
  void record(long start, long end, int keyCode, boolean ok) {
    if (ok) {
      int second = (int) (end / 1_000_000_000L);
      if (second < SECONDS_MAX) {
        perSecond.incrementAndGet(second);
      }
    }
    int index = size.getAndIncrement();
    if (index < started.length) {
      started[index] = start;
      int took = (int) Math.min(Integer.MAX_VALUE, Math.max(1, (end - start) / 1_000));
      micros[index] = ok ? took : -took;
      keyCodes[index] = keyCode;
    }
  }

  /** Operations logged (at most the capacity). */
  int size() {
    return Math.min(size.get(), started.length);
  }

  /** Operations not logged for want of room. */
  long dropped() {
    return Math.max(0, size.get() - started.length);
  }

  long started(int index) {
    return started[index];
  }

  long ended(int index) {
    return started[index] + Math.abs((long) micros[index]) * 1_000;
  }

  boolean ok(int index) {
    return micros[index] > 0;
  }

  int keyCode(int index) {
    return keyCodes[index];
  }

  /** Operations acknowledged in each second since the origin, up to {@code seconds}. */
  double[] perSecond(int seconds) {
    double[] counts = new double[Math.min(seconds, SECONDS_MAX)];
    for (int i = 0; i < counts.length; i++) {
      counts[i] = perSecond.get(i);
    }
    return counts;
  }

  /**
   * Mean acknowledged operations a second over [{@code from}, {@code to}) nanoseconds; 0 if none.
   */
  double throughput(long from, long to) {
    int first = (int) Math.max(0, from / 1_000_000_000L);
    int last = (int) Math.min(SECONDS_MAX, to / 1_000_000_000L);
    if (last <= first) {
      return 0;
    }
    long total = 0;
    for (int second = first; second < last; second++) {
      total += perSecond.get(second);
    }
    return (double) total / (last - first);
  }
}
