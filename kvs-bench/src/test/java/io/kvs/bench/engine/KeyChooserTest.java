package io.kvs.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class KeyChooserTest {
  private static final double THETA = ZipfianGenerator.YCSB_THETA;

  @Test
  void scrambledZipfianKeepsTheSkewButScattersTheHotRecords() {
    int records = 10_000;
    KeyChooser chooser =
        KeyChooser.scrambledZipfian(records, THETA, ZipfianGenerator.zeta(records, THETA));
    long[] counts = draw(chooser, records, 300_000);

    // Skew survives the scrambling: the hottest 1% of records get a large share.
    long[] sorted = counts.clone();
    Arrays.sort(sorted);
    long hottest = 0;
    for (int i = records - records / 100; i < records; i++) {
      hottest += sorted[i];
    }
    assertThat(hottest / 300_000.0).isGreaterThan(0.35);

    // ... but the hot records are spread over the record numbers, not bunched at the start, which
    // is where plain zipfian would put them.
    int[] hot = topRecords(counts, 20);
    int low = Arrays.stream(hot).min().orElseThrow();
    int high = Arrays.stream(hot).max().orElseThrow();
    assertThat(high - low).isGreaterThan(records / 2);
    long inFirstPercent = Arrays.stream(hot).filter(r -> r < records / 100).count();
    assertThat(inFirstPercent).isLessThan(5);
  }

  @Test
  void scrambledZipfianOnlyPicksExistingRecords() {
    // Room for inserts that have not happened yet: those records must never be chosen.
    KeyChooser chooser =
        KeyChooser.scrambledZipfian(2000, THETA, ZipfianGenerator.zeta(2000, THETA));
    SplittableRandom random = new SplittableRandom(3);
    for (int i = 0; i < 50_000; i++) {
      assertThat(chooser.next(random, 1000)).isBetween(0L, 999L);
    }
  }

  @Test
  void latestFavoursTheNewestRecords() {
    int records = 10_000;
    KeyChooser chooser = KeyChooser.latest(records, THETA, ZipfianGenerator.zeta(records, THETA));
    long[] counts = draw(chooser, records, 200_000);
    assertThat(topRecords(counts, 1)[0]).isEqualTo(records - 1);
    long newestPercent = 0;
    for (int i = records - records / 100; i < records; i++) {
      newestPercent += counts[i];
    }
    long oldestHalf = 0;
    for (int i = 0; i < records / 2; i++) {
      oldestHalf += counts[i];
    }
    assertThat(newestPercent / 200_000.0).isGreaterThan(0.4);
    assertThat(oldestHalf / 200_000.0).isLessThan(0.1);
  }

  @Test
  void latestFollowsInserts() {
    KeyChooser chooser = KeyChooser.latest(1000, THETA, ZipfianGenerator.zeta(1000, THETA));
    SplittableRandom random = new SplittableRandom(5);
    long newest = 0;
    for (int i = 0; i < 20_000; i++) {
      long record = chooser.next(random, 1500);
      assertThat(record).isBetween(0L, 1499L);
      newest += record == 1499 ? 1 : 0;
    }
    assertThat(newest).isGreaterThan(1000);
  }

  @Test
  void uniformCoversTheRecordsEvenly() {
    long[] counts = draw(KeyChooser.uniform(), 100, 100_000);
    for (long count : counts) {
      assertThat(count).isBetween(800L, 1200L);
    }
  }

  private static long[] draw(KeyChooser chooser, int records, int draws) {
    SplittableRandom random = new SplittableRandom(11);
    long[] counts = new long[records];
    for (int i = 0; i < draws; i++) {
      counts[(int) chooser.next(random, records)]++;
    }
    return counts;
  }

  private static int[] topRecords(long[] counts, int n) {
    Integer[] order = new Integer[counts.length];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (a, b) -> Long.compare(counts[b], counts[a]));
    int[] top = new int[n];
    for (int i = 0; i < n; i++) {
      top[i] = order[i];
    }
    return top;
  }
}
