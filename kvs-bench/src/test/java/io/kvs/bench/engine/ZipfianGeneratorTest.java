package io.kvs.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ZipfianGeneratorTest {
  private static final double THETA = ZipfianGenerator.YCSB_THETA;

  @Test
  void ranksFollowTheZipfianLaw() {
    int items = 1000;
    int draws = 400_000;
    ZipfianGenerator generator = new ZipfianGenerator(items, THETA);
    SplittableRandom random = new SplittableRandom(1);
    long[] counts = new long[items];
    for (int i = 0; i < draws; i++) {
      long rank = generator.next(random);
      assertThat(rank).isBetween(0L, items - 1L);
      counts[(int) rank]++;
    }
    double zeta = ZipfianGenerator.zeta(items, THETA);
    // Rank 0 and rank 1 are exact in Gray's method; check them against 1 / (i^theta * zeta).
    assertThat(counts[0] / (double) draws).isCloseTo(1 / zeta, within(0.01));
    assertThat(counts[1] / (double) draws).isCloseTo(1 / (Math.pow(2, THETA) * zeta), within(0.01));
    // Skew: the top 10% of the ranks take most of the draws, the bottom half few.
    long top = 0;
    long bottomHalf = 0;
    for (int i = 0; i < items; i++) {
      if (i < items / 10) {
        top += counts[i];
      } else if (i >= items / 2) {
        bottomHalf += counts[i];
      }
    }
    assertThat(top / (double) draws).isGreaterThan(0.6);
    assertThat(bottomHalf / (double) draws).isLessThan(0.15);
  }

  @Test
  void growingMatchesAFreshGenerator() {
    ZipfianGenerator grown = new ZipfianGenerator(1000, THETA);
    grown.growTo(5000);
    ZipfianGenerator fresh = new ZipfianGenerator(5000, THETA);
    SplittableRandom first = new SplittableRandom(7);
    SplittableRandom second = new SplittableRandom(7);
    for (int i = 0; i < 10_000; i++) {
      assertThat(grown.next(first)).isEqualTo(fresh.next(second));
    }
    assertThat(grown.items()).isEqualTo(5000);
  }

  @Test
  void zetaIsTheGeneralizedHarmonicNumber() {
    assertThat(ZipfianGenerator.zeta(1, THETA)).isEqualTo(1.0);
    assertThat(ZipfianGenerator.zeta(2, THETA)).isCloseTo(1 + Math.pow(0.5, THETA), within(1e-12));
  }
}
