package io.kvs.bench.engine;

import java.util.SplittableRandom;

/**
 * Zipfian ranks over {@code [0, items)}: rank 0 is the most popular, rank {@code i} is drawn with
 * probability proportional to {@code 1 / (i + 1)^theta}. Uses the constant-time method of Gray et
 * al., "Quickly Generating Billion-Record Synthetic Databases" (SIGMOD 1994), which YCSB also uses:
 * with {@code zeta(n) = sum_{i=1..n} 1/i^theta}, {@code alpha = 1 / (1 - theta)} and {@code eta =
 * (1 - (2/n)^(1 - theta)) / (1 - zeta(2) / zeta(n))}, a uniform {@code u} maps to rank 0 if {@code
 * u * zeta(n) < 1}, to rank 1 if it is below {@code 1 + 0.5^theta}, and otherwise to {@code n *
 * (eta * u - eta + 1)^alpha}.
 *
 * <p>The item count may grow ({@link #growTo(long)}), extending {@code zeta(n)} by the new terms
 * only, which is how the "latest" distribution follows inserts. Not thread-safe: one instance per
 * client thread; the expensive {@link #zeta(long, double)} can be computed once and shared.
 */
public final class ZipfianGenerator {
  /** YCSB's default skew. */
  public static final double YCSB_THETA = 0.99;

  private final double theta;
  private final double alpha;
  private final double zeta2;
  private final double halfPowTheta;
  private long items;
  private double zetaN;
  private double eta;

  /** A generator over {@code items} ranks, computing {@code zeta(items)} (O(items) time). */
  public ZipfianGenerator(long items, double theta) {
    this(items, theta, zeta(items, theta));
  }

  /** A generator over {@code items} ranks with {@code zetaN = zeta(items, theta)} given. */
  public ZipfianGenerator(long items, double theta, double zetaN) {
    if (items < 1) {
      throw new IllegalArgumentException("need at least one item: " + items);
    }
    if (!(theta > 0 && theta < 1)) {
      throw new IllegalArgumentException("theta must be in (0, 1): " + theta);
    }
    this.theta = theta;
    this.alpha = 1 / (1 - theta);
    this.zeta2 = zeta(2, theta);
    this.halfPowTheta = Math.pow(0.5, theta);
    this.items = items;
    this.zetaN = zetaN;
    this.eta = eta();
  }

  /** {@code sum_{i=1..n} 1 / i^theta}. */
  public static double zeta(long n, double theta) {
    return extendZeta(0, n, theta, 0);
  }

  private static double extendZeta(long from, long to, double theta, double initial) {
    double sum = initial;
    for (long i = from + 1; i <= to; i++) {
      sum += 1 / Math.pow(i, theta);
    }
    return sum;
  }

  private double eta() {
    return (1 - Math.pow(2.0 / items, 1 - theta)) / (1 - zeta2 / zetaN);
  }

  /** The number of ranks. */
  public long items() {
    return items;
  }

  /** Grows the rank count to {@code newItems} (no-op if not larger). */
  public void growTo(long newItems) {
    if (newItems <= items) {
      return;
    }
    zetaN = extendZeta(items, newItems, theta, zetaN);
    items = newItems;
    eta = eta();
  }

  /** Draws a rank in {@code [0, items)}. */
  public long next(SplittableRandom random) {
    double u = random.nextDouble();
    double uz = u * zetaN;
    if (uz < 1) {
      return 0;
    }
    if (uz < 1 + halfPowTheta) {
      return Math.min(1, items - 1);
    }
    long rank = (long) (items * Math.pow(eta * u - eta + 1, alpha));
    return Math.min(rank, items - 1);
  }
}
