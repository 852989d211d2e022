package io.kvs.server.regions;

import io.kvs.engine.Region;
import io.kvs.engine.RegionIterator;

/** Where a region splits: the key its primary picks. */
final class SplitKeys {
  private SplitKeys() {}

  /**
   * The median of {@code region}'s live keys (the first key of its upper half), or null with fewer
   * than two keys. Walks the keys twice (leaves only, no values): a 256 MiB region of 1 KiB values
   * is about 250,000 keys.
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
