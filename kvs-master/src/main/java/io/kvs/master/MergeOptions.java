package io.kvs.master;

import java.time.Duration;

/**
 * When the master merges two neighbouring regions by itself ({@link Merges}; docs/ARCHITECTURE.md
 * "Merging regions"): both small, both cold, both old enough, and small enough together that the
 * merged region is nowhere near splitting again.
 *
 * @param sizeBytes each region's primary holds fewer key and value bytes than this ({@code
 *     --merge-size}; 0: never by itself), and both together less than half the size at which the
 *     merged region would split ({@link SplitOptions#sizeFor}), so a merge never undoes a split the
 *     size asked for
 * @param rest how long the master must have seen both regions (a region just split or merged rests
 *     this long; {@code --merge-rest-ms})
 * @param coldQps both regions together serve fewer requests a second than this (smoothed)
 */
public record MergeOptions(long sizeBytes, Duration rest, double coldQps) {
  /** Requests a second below which two regions together are cold enough to merge. */
  public static final double COLD_QPS = 50;

  /** The defaults: regions below 16 MiB each, seen for 10 minutes, cold. */
  public static final MergeOptions DEFAULT =
      new MergeOptions(16L << 20, Duration.ofMinutes(10), COLD_QPS);

  /** Never by itself (operators' requests only). */
  public static final MergeOptions OFF = new MergeOptions(0, Duration.ofMinutes(10), COLD_QPS);

  public MergeOptions {
    if (sizeBytes < 0 || rest.isNegative() || coldQps < 0) {
      throw new IllegalArgumentException("negative --merge-size or --merge-rest-ms");
    }
  }
}
