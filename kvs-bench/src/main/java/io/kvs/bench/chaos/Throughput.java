package io.kvs.bench.chaos;

import java.util.concurrent.atomic.AtomicLongArray;

/** Successful operations per second since an origin, for the chart; bounded in seconds. */
final class Throughput {
  private final long originNanos;
  private final AtomicLongArray perSecond;

  Throughput(long originNanos, int secondsMax) {
    this.originNanos = originNanos;
    this.perSecond = new AtomicLongArray(secondsMax);
  }

  /** Counts one success at {@code nanos} (dropped past the bound). */
  void count(long nanos) {
    long second = (nanos - originNanos) / 1_000_000_000L;
    if (second >= 0 && second < perSecond.length()) {
      perSecond.incrementAndGet((int) second);
    }
  }

  /** The counts of the first {@code seconds} seconds. */
  double[] series(int seconds) {
    double[] values = new double[Math.max(0, Math.min(seconds, perSecond.length()))];
    for (int i = 0; i < values.length; i++) {
      values[i] = perSecond.get(i);
    }
    return values;
  }
}
