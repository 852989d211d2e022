package io.kvs.master;

import java.time.Duration;

/**
 * When the master splits a region by itself ({@link Splits}; docs/ARCHITECTURE.md "Splitting a
 * region"): it asks for the split as an operator would ({@code admin/splits/<region>}, the median
 * of the region's keys), one region at a time.
 *
 * @param sizeBytes a region whose primary holds at least this many key and value bytes splits
 *     ({@code --split-size}; 0: never by size). A daughter of a split counts only once it shares no
 *     segment with its sibling (until its compactions rewrite what it inherited, its levels count
 *     the sibling's keys too)
 * @param qps a region whose primary served at least this many requests a second, sustained over
 *     {@code window}, splits ({@code --split-qps}; 0, the default: never by load -- the key a split
 *     picks is the median of the region's keys, not of its load, so a hot range may stay on one
 *     side)
 * @param window how long a load must last, and how long a region created by a split waits before it
 *     is split again by size or load ({@code --split-window-ms})
 */
public record SplitOptions(long sizeBytes, long qps, Duration window) {
  /** The defaults: 256 MiB (as TiKV's region-split-size), not by load, a 10 s window. */
  public static final SplitOptions DEFAULT =
      new SplitOptions(256L << 20, 0, Duration.ofSeconds(10));

  /** Never by itself (operators' requests only). */
  public static final SplitOptions OFF = new SplitOptions(0, 0, Duration.ofSeconds(10));

  public SplitOptions {
    if (sizeBytes < 0 || qps < 0 || window.isNegative()) {
      throw new IllegalArgumentException("negative --split-size, --split-qps or --split-window-ms");
    }
  }
}
