package io.kvs.server.metrics;

import io.kvs.core.StatusCode;
import io.kvs.service.RequestStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The request meters of a region server, from the native service's counters ({@link RequestStats}),
 * updated by {@link #update} on the metrics thread:
 *
 * <ul>
 *   <li>{@code kvs.server.requests} (counter; tags {@code operation}, {@code status}): requests
 *       answered;
 *   <li>{@code kvs.server.request.latency} (function timer; tag {@code operation}): count and total
 *       service time, so a rate of the two gives the mean;
 *   <li>{@code kvs.server.request.latency.percentile} (gauge, seconds; tags {@code operation},
 *       {@code percentile} 0.5, 0.99, 0.999): over the last update interval, the upper bound of the
 *       native histogram's power-of-two bucket holding that percentile (so within a factor of two
 *       above it); NaN in an interval without requests.
 * </ul>
 *
 * Meters of an operation and status appear the first time one is counted: at most 6 operations x 14
 * statuses counters and 6 x (1 + 3) latency meters. Not thread-safe: one thread updates.
 */
final class RequestMeters {
  static final double[] PERCENTILES = {0.5, 0.99, 0.999};

  private final MeterRegistry registry;
  private volatile RequestStats latest;
  private final boolean[][] counted = new boolean[RequestStats.OPERATIONS][RequestStats.STATUSES];
  private final boolean[] timed = new boolean[RequestStats.OPERATIONS];
  private final long[][] previousBuckets = new long[RequestStats.OPERATIONS][RequestStats.BUCKETS];
  // Per operation and percentile, seconds; written by update, read by the gauges.
  private final double[][] percentiles = new double[RequestStats.OPERATIONS][PERCENTILES.length];

  RequestMeters(MeterRegistry registry) {
    this.registry = registry;
  }

  /** Takes a new snapshot: registers meters for what appeared, recomputes the percentiles. */
  void update(RequestStats stats) {
    latest = stats;
    for (int operation = 0; operation < RequestStats.OPERATIONS; operation++) {
      for (int status = 0; status < RequestStats.STATUSES; status++) {
        if (!counted[operation][status] && stats.count(operation, status) > 0) {
          counted[operation][status] = true;
          register(operation, status);
        }
      }
      if (!timed[operation] && stats.count(operation) > 0) {
        timed[operation] = true;
        registerLatency(operation);
      }
      updatePercentiles(operation, stats);
    }
  }

  private void register(int operation, int status) {
    final int op = operation;
    final int code = status;
    FunctionCounter.builder("kvs.server.requests", this, m -> m.latest.count(op, code))
        .description("requests the region server answered, by operation and reply status")
        .tag("operation", RequestStats.operationName(operation))
        .tag("status", statusName(status))
        .register(registry);
  }

  private void registerLatency(int operation) {
    final int op = operation;
    String name = RequestStats.operationName(operation);
    FunctionTimer.builder(
            "kvs.server.request.latency",
            this,
            m -> m.latest.count(op),
            m -> m.latest.latencySumNanos(op),
            TimeUnit.NANOSECONDS)
        .description("service time of requests, from entering the native service to the reply")
        .tag("operation", name)
        .register(registry);
    for (int i = 0; i < PERCENTILES.length; i++) {
      final int index = i;
      Gauge.builder("kvs.server.request.latency.percentile", this, m -> m.percentiles[op][index])
          .description(
              "service time percentile over the last second (upper bound of its power-of-two"
                  + " bucket)")
          .baseUnit("seconds")
          .tag("operation", name)
          .tag("percentile", Double.toString(PERCENTILES[i]))
          .register(registry);
    }
  }

  private void updatePercentiles(int operation, RequestStats stats) {
    long[] delta = new long[RequestStats.BUCKETS];
    long total = 0;
    for (int bucket = 0; bucket < RequestStats.BUCKETS; bucket++) {
      long now = stats.bucket(operation, bucket);
      delta[bucket] = now - previousBuckets[operation][bucket];
      previousBuckets[operation][bucket] = now;
      total += delta[bucket];
    }
    for (int i = 0; i < PERCENTILES.length; i++) {
      percentiles[operation][i] =
          total <= 0 ? Double.NaN : percentile(delta, total, PERCENTILES[i]);
    }
  }

  /**
   * The upper bound, in seconds, of the bucket holding percentile {@code q} of {@code total}
   * latencies counted in {@code buckets}; the last (unbounded) bucket reports its lower bound.
   */
  static double percentile(long[] buckets, long total, double q) {
    long rank = (long) Math.ceil(q * total);
    long seen = 0;
    for (int bucket = 0; bucket < buckets.length; bucket++) {
      seen += buckets[bucket];
      if (seen >= rank) {
        long micros =
            bucket == RequestStats.BUCKETS - 1
                ? 1L << (bucket - 1)
                : RequestStats.bucketUpperMicros(bucket);
        return micros / 1e6;
      }
    }
    return Double.NaN;
  }

  static String statusName(int status) {
    for (StatusCode code : StatusCode.values()) {
      if (code.code() == status) {
        return code.name().toLowerCase(Locale.ROOT);
      }
    }
    return "unknown";
  }
}
