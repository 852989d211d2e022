package io.kvs.client;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Bounded exponential backoff with jitter: 5 ms, doubling to 500 ms, each delay drawn uniformly
 * from its upper half. One per operation; not thread-safe.
 */
final class Backoff {
  static final long INITIAL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
  static final long MAX_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  /**
   * The cap while a server the map names refuses a region the map shows opening (a split's
   * daughter, a promoted backup: served within tens of milliseconds): retried at this pace rather
   * than half a second apart, a refusal costing the server next to nothing.
   */
  static final long OPENING_MAX_NANOS = TimeUnit.MILLISECONDS.toNanos(25);

  private long next = INITIAL_NANOS;

  /** The next delay, in nanoseconds. */
  long nextNanos() {
    return nextNanos(MAX_NANOS);
  }

  /** The next delay, in nanoseconds, the doubling capped at {@code maxNanos}. */
  long nextNanos(long maxNanos) {
    long base = Math.min(next, maxNanos);
    next = Math.min(MAX_NANOS, next * 2);
    return base / 2 + ThreadLocalRandom.current().nextLong(base / 2 + 1);
  }

  /** Starts over at the initial delay (after progress). */
  void reset() {
    next = INITIAL_NANOS;
  }
}
