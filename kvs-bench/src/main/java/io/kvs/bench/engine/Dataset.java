package io.kvs.bench.engine;

import io.kvs.bench.engine.KvMix.SizeClass;

/**
 * The records one system holds during a run: how many exist, and the size class of each one's
 * current value, from which the live KV bytes (the denominator of space amplification) follow.
 * Inserted records get a size class that depends only on the seed and the record number, so every
 * system loads the very same data whatever the interleaving of its client threads. Thread-safe
 * enough for a benchmark: size-class updates of one record by two threads at once may leave either
 * class, which the live byte count then reflects.
 */
public final class Dataset {
  private static final SizeClass[] CLASSES = SizeClass.values();

  private final KvMix mix;
  private final long seed;
  private final InsertSequence inserts = new InsertSequence(0);

  /** Per record: 0 if never written, else size class ordinal + 1. */
  private final byte[] classes;

  /**
   * @param capacity the most records this dataset may ever hold (load plus every insert of the
   *     runs)
   */
  public Dataset(KvMix mix, long seed, long capacity) {
    if (capacity > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("too many records for one dataset: " + capacity);
    }
    this.mix = mix;
    this.seed = seed;
    this.classes = new byte[(int) capacity];
  }

  public KvMix mix() {
    return mix;
  }

  public InsertSequence inserts() {
    return inserts;
  }

  /** The most records this dataset can hold. */
  public long capacity() {
    return classes.length;
  }

  /** The size class of the value that inserts record {@code number}; fixed by seed and number. */
  public SizeClass insertClass(long number) {
    return mix.draw(mix64(seed ^ mix64(number + 0x632be59bd9b4e019L)));
  }

  /** Notes that record {@code number} now holds a value of {@code sizeClass}. */
  public void written(long number, SizeClass sizeClass) {
    if (number >= classes.length) {
      throw new IllegalStateException(
          "record " + number + " exceeds the dataset capacity " + classes.length);
    }
    classes[(int) number] = (byte) (sizeClass.ordinal() + 1);
  }

  /** Key + value bytes of every existing record's current value. */
  public long liveKvBytes() {
    long existing = Math.min(inserts.acknowledged(), classes.length);
    long bytes = 0;
    for (int i = 0; i < existing; i++) {
      int code = classes[i];
      if (code != 0) {
        bytes += CLASSES[code - 1].kvBytes();
      }
    }
    return bytes;
  }

  /** Stafford's mix13 / SplitMix64 finalizer: a bijective scramble of 64 bits. */
  static long mix64(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }
}
