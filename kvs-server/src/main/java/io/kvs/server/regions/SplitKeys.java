package io.kvs.server.regions;

import io.kvs.engine.Region;
import io.kvs.engine.RegionIterator;

/** Where a region splits: the key its primary picks. */
final class SplitKeys {
  private SplitKeys() {}

  /**
   * Where {@code region} splits by size: from its index when it can say (no scan: {@link
   * Region#splitKey}), else the median of its live keys; null with fewer than two keys.
   */
  static byte[] middle(Region region) {
    return region.splitKey().orElseGet(() -> median(region));
  }

  /**
   * Where {@code region} splits by load: the median of the keys its recent requests named ({@link
   * Region#loadSplitKey}), or its middle by size if it sampled too few.
   */
  static byte[] byLoad(Region region) {
    return region.loadSplitKey().orElseGet(() -> middle(region));
  }

  /**
   * The median of {@code region}'s live keys (the first key of its upper half), or null with fewer
   * than two keys. Walks the keys twice (leaves only, no values): a 116 MB region of 1 KB values
   * took 1.5 s of a seal in the elastic benchmark.
   */
  static byte[] median(Region region) {
    long count = 0;
    try (RegionIterator keys = region.newIterator(null)) {
      for (keys.seekToFirst(); keys.isValid(); keys.next()) {
        count++;
      }
    }
    if (count < 2) {
      return null;
    }
    long half = count / 2;
    try (RegionIterator keys = region.newIterator(null)) {
      keys.seekToFirst();
      for (long i = 0; i < half && keys.isValid(); i++) {
        keys.next();
      }
      return keys.isValid() ? keys.key() : null;
    }
  }
}
