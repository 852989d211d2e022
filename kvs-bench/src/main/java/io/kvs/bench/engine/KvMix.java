package io.kvs.bench.engine;

import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The KV size mixes of the design brief (DESIGN.md §8, after Tebis Table 2 and the Parallax
 * thesis): percentages of small, medium and large KV pairs. Each write draws its size class from
 * the mix, so an update may move a key to another class, as in the thesis.
 */
public enum KvMix {
  S(100, 0, 0),
  M(0, 100, 0),
  L(0, 0, 100),
  SD(60, 20, 20),
  MD(20, 60, 20),
  LD(20, 20, 60);

  /** KV pair sizes (key + value bytes) of the three classes. */
  public enum SizeClass {
    SMALL(33),
    MEDIUM(123),
    LARGE(1023);

    private final int kvBytes;

    SizeClass(int kvBytes) {
      this.kvBytes = kvBytes;
    }

    /** Key + value bytes of a pair of this class. */
    public int kvBytes() {
      return kvBytes;
    }

    /** Value bytes of a pair of this class, with keys of {@link Keys#KEY_BYTES}. */
    public int valueBytes() {
      return kvBytes - Keys.KEY_BYTES;
    }
  }

  private final int smallPercent;
  private final int mediumPercent;
  private final int largePercent;

  KvMix(int smallPercent, int mediumPercent, int largePercent) {
    this.smallPercent = smallPercent;
    this.mediumPercent = mediumPercent;
    this.largePercent = largePercent;
  }

  public int smallPercent() {
    return smallPercent;
  }

  public int mediumPercent() {
    return mediumPercent;
  }

  public int largePercent() {
    return largePercent;
  }

  /** Draws the size class of one write. */
  public SizeClass draw(SplittableRandom random) {
    return draw(random.nextLong());
  }

  /** The size class for 64 random bits. */
  public SizeClass draw(long randomBits) {
    int percent = (int) Long.remainderUnsigned(randomBits, 100);
    if (percent < smallPercent) {
      return SizeClass.SMALL;
    }
    return percent < smallPercent + mediumPercent ? SizeClass.MEDIUM : SizeClass.LARGE;
  }

  /** The expected KV bytes of one pair. */
  public double averageKvBytes() {
    return (smallPercent * SizeClass.SMALL.kvBytes()
            + mediumPercent * SizeClass.MEDIUM.kvBytes()
            + largePercent * SizeClass.LARGE.kvBytes())
        / 100.0;
  }

  /** Parses a mix name, ignoring case. */
  public static KvMix parse(String name) {
    try {
      return valueOf(name.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "unknown KV size mix '" + name + "'; known: S, M, L, SD, MD, LD", e);
    }
  }
}
