package io.kvs.master;

import java.time.Duration;

/**
 * When the master splits a region by itself ({@link Splits}; docs/ARCHITECTURE.md "Splitting a
 * region"): it asks for the split as an operator would ({@code admin/splits/<region>}, the median
 * of the region's keys), one region at a time.
 *
 * @param sizeBytes a region whose primary holds at least this many key and value bytes splits
 *     ({@code --split-size}; 0: never by size). A daughter of a split that still shares levels with
 *     its sibling counts its part of them, estimated from their indexes
 * @param firstSizeBytes the size steps up to {@code sizeBytes} from this ({@code
 *     --split-first-size}; 0: no steps): a region splits at {@code min(sizeBytes, firstSizeBytes *
 *     n^3)}, n the regions its primary leads (counting it), as HBase's
 *     IncreasingToUpperBoundRegionSplitPolicy -- so that a cluster started with one region spreads
 *     over its servers while its first megabytes are written, and splits at {@code sizeBytes} once
 *     each server leads a few regions
 * @param qps a region whose primary served at least this many requests a second, sustained over
 *     {@code window}, splits ({@code --split-qps}; 0, the default: never by load -- the key a split
 *     picks is the middle of the region by size, not by load, so a hot range may stay on one side)
 * @param window how long a load must last, and how long a region created by a split waits before it
 *     is split again by size or load ({@code --split-window-ms})
 */
public record SplitOptions(long sizeBytes, long firstSizeBytes, long qps, Duration window) {
  /**
   * The defaults: 256 MiB (as TiKV's region-split-size), stepping up from 2 MiB (2, 16, 54, 128,
   * 250 MiB for a primary leading 1 to 5 regions), not by load, a 10 s window.
   */
  public static final SplitOptions DEFAULT =
      new SplitOptions(256L << 20, 2L << 20, 0, Duration.ofSeconds(10));

  /** Never by itself (operators' requests only). */
  public static final SplitOptions OFF = new SplitOptions(0, 0, 0, Duration.ofSeconds(10));

  public SplitOptions {
    if (sizeBytes < 0 || firstSizeBytes < 0 || qps < 0 || window.isNegative()) {
      throw new IllegalArgumentException(
          "negative --split-size, --split-first-size, --split-qps or --split-window-ms");
    }
  }

  /** The size at which a region splits whose primary leads {@code led} regions (0: never). */
  public long sizeFor(int led) {
    if (sizeBytes == 0 || firstSizeBytes == 0) {
      return sizeBytes;
    }
    double stepped = (double) firstSizeBytes * Math.pow(Math.max(led, 1), 3);
    return stepped >= sizeBytes ? sizeBytes : (long) stepped;
  }
}
