package io.kvs.bench.engine;

import java.util.SplittableRandom;

/**
 * Picks the record an operation reads, updates or starts scanning at, among the records inserted so
 * far. One instance per client thread (implementations keep per-thread state).
 */
public interface KeyChooser {
  /**
   * A record number in {@code [0, existing)}.
   *
   * @param existing records inserted (and acknowledged) so far; at least 1
   */
  long next(SplittableRandom random, long existing);

  /** Uniform over the existing records. */
  static KeyChooser uniform() {
    return (random, existing) -> random.nextLong(existing);
  }

  /**
   * YCSB's "zipfian" request distribution: zipfian popularity with theta {@code theta} over {@code
   * items} ranks (the records at the start of the phase plus room for the phase's inserts, as YCSB
   * sizes it), each rank scattered over the key space by a hash so that popular records are not
   * neighbours (YCSB's scrambled zipfian). Ranks that land on records not inserted yet are drawn
   * again.
   *
   * @param zetaN {@code ZipfianGenerator.zeta(items, theta)}, computed once for all threads
   */
  static KeyChooser scrambledZipfian(long items, double theta, double zetaN) {
    ZipfianGenerator ranks = new ZipfianGenerator(items, theta, zetaN);
    return (random, existing) -> {
      for (int attempt = 0; attempt < 64; attempt++) {
        long record = Long.remainderUnsigned(Keys.fnv1a64(ranks.next(random)), items);
        if (record < existing) {
          return record;
        }
      }
      // Only when almost all of the room for inserts is still empty: fall back to uniform.
      return random.nextLong(existing);
    };
  }

  /**
   * Full passes over the records, shared by every client thread: the n-th draw of any thread is
   * record {@code n mod records}, so {@code k * records} draws update every record exactly {@code
   * k} times.
   */
  static KeyChooser passes(java.util.concurrent.atomic.AtomicLong draws, long records) {
    return (random, existing) -> Math.floorMod(draws.getAndIncrement(), records);
  }

  /**
   * YCSB's "latest" request distribution: the newest record is the most popular, popularity falling
   * off zipfian with age (rank {@code r} is record {@code existing - 1 - r}); the ranks follow the
   * growing record count.
   *
   * @param zetaN {@code ZipfianGenerator.zeta(items, theta)} for the records at phase start
   */
  static KeyChooser latest(long items, double theta, double zetaN) {
    ZipfianGenerator ranks = new ZipfianGenerator(items, theta, zetaN);
    return (random, existing) -> {
      ranks.growTo(existing);
      long rank = ranks.next(random);
      return Math.max(0, existing - 1 - Math.min(rank, existing - 1));
    };
  }
}
