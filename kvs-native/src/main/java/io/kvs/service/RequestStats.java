package io.kvs.service;

import io.kvs.core.StatusCode;

/**
 * A snapshot of what a region service answered since it started (monitoring): per operation (the
 * wire opcodes) a count per reply status, a latency histogram and the latencies' sum. Latency is
 * service time, from the request entering the service to its reply (a replicated write's wait for
 * its backups included). Counted natively with relaxed per-thread counters and read in one call
 * ({@link RegionService#requestStats()}); counters only grow.
 */
public final class RequestStats {
  /** Operations counted, by wire opcode: noop, put, get, delete, scan, multi-get. */
  public static final int OPERATIONS = 6;

  /** Reply statuses counted, by {@link StatusCode#code()} (0 .. 13). */
  public static final int STATUSES = 14;

  /**
   * Latency buckets: bucket 0 counts latencies under 1 us, bucket b (1 .. {@code BUCKETS - 2})
   * those in [2^(b-1), 2^b) us, the last one anything longer.
   */
  public static final int BUCKETS = 28;

  static final int VALUES = OPERATIONS * (STATUSES + BUCKETS + 1);

  private static final String[] OPERATION_NAMES = {
    "noop", "put", "get", "delete", "scan", "multiget"
  };

  private final long[] values;

  RequestStats(long[] values) {
    if (values.length != VALUES) {
      throw new IllegalStateException(
          "native request stats hold " + values.length + " values, expected " + VALUES);
    }
    this.values = values;
  }

  /** The name of operation {@code operation} (0 .. {@link #OPERATIONS} - 1), lowercase. */
  public static String operationName(int operation) {
    return OPERATION_NAMES[operation];
  }

  /** Requests of {@code operation} answered with status code {@code status}. */
  public long count(int operation, int status) {
    return values[operation * STATUSES + status];
  }

  /** Requests of {@code operation} answered, whatever their status. */
  public long count(int operation) {
    long total = 0;
    for (int status = 0; status < STATUSES; status++) {
      total += count(operation, status);
    }
    return total;
  }

  /** Requests of {@code operation} whose latency fell in {@code bucket}. */
  public long bucket(int operation, int bucket) {
    return values[OPERATIONS * STATUSES + operation * BUCKETS + bucket];
  }

  /** The sum of {@code operation}'s latencies, in nanoseconds. */
  public long latencySumNanos(int operation) {
    return values[OPERATIONS * (STATUSES + BUCKETS) + operation];
  }

  /**
   * The upper bound of {@code bucket} in microseconds (exclusive): 2^bucket; {@link Long#MAX_VALUE}
   * for the last bucket.
   */
  public static long bucketUpperMicros(int bucket) {
    return bucket == BUCKETS - 1 ? Long.MAX_VALUE : 1L << bucket;
  }
}
