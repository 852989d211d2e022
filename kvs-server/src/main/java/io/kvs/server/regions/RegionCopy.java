package io.kvs.server.regions;

import io.kvs.core.KeyValue;
import io.kvs.engine.Engine;
import io.kvs.engine.Region;
import io.kvs.engine.RegionIterator;
import java.util.List;

/**
 * Copies the live pairs of engine regions into a new one, for a merge ({@link HostedRegions#open}):
 * each source read through one iterator (one snapshot) in pages of at most {@link #PAGE_PAIRS}
 * pairs and {@link #PAGE_BYTES} bytes, written in key order, and the new region synced before this
 * returns, so that it holds every pair on disk before its sources are dropped.
 */
final class RegionCopy {
  /** Pairs read per page at most. */
  static final int PAGE_PAIRS = 1024;

  /** Bytes read per page at most (about; a single pair may be larger). */
  static final int PAGE_BYTES = 4 << 20;

  private RegionCopy() {}

  /** What {@link #merge} found and did. */
  enum Outcome {
    /** Made the merged region (over a half-made one, if there was one). */
    MERGED,
    /** Found it made already (a crash after the commit point: the upper source dropped now). */
    DONE,
    /** A source is missing and the merged region is not made: nothing to make it from. */
    MISSING
  }

  /**
   * Makes engine region {@code merged} from {@code left} and {@code right} (see the class comment);
   * {@code exists} says whether an engine region exists. Returns what it found and did, and the
   * pairs copied in {@code copied[0]}.
   */
  static Outcome merge(
      Engine engine,
      String left,
      String right,
      String merged,
      java.util.function.Predicate<String> exists,
      long[] copied) {
    boolean hasLeft = exists.test(left);
    if (exists.test(merged)) {
      if (!hasLeft) {
        if (exists.test(right)) {
          engine.dropRegion(right);
        }
        return Outcome.DONE;
      }
      engine.dropRegion(merged);
    }
    if (!hasLeft || !exists.test(right)) {
      return Outcome.MISSING;
    }
    copied[0] = copy(engine, List.of(left, right), merged);
    engine.dropRegion(left);
    engine.dropRegion(right);
    return Outcome.MERGED;
  }

  /**
   * Creates engine region {@code target} holding every live pair of {@code sources}; returns how
   * many pairs it copied. The sources are left as they are.
   */
  static long copy(Engine engine, List<String> sources, String target) {
    Region into = engine.createRegion(target);
    long pairs = 0;
    for (String name : sources) {
      Region from = engine.openRegion(name);
      try (RegionIterator iterator = from.newIterator(null)) {
        iterator.seekToFirst();
        while (iterator.isValid()) {
          for (KeyValue pair : iterator.nextPairs(PAGE_PAIRS, PAGE_BYTES)) {
            into.put(pair.key(), pair.value());
            pairs++;
          }
        }
      }
    }
    into.sync();
    return pairs;
  }
}
