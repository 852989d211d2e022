package io.kvs.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kvs.bench.engine.KvMix.SizeClass;
import java.util.EnumMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class KvMixTest {
  @Test
  void sizeClassesHaveTheDesignBriefSizes() {
    assertThat(SizeClass.SMALL.kvBytes()).isEqualTo(33);
    assertThat(SizeClass.MEDIUM.kvBytes()).isEqualTo(123);
    assertThat(SizeClass.LARGE.kvBytes()).isEqualTo(1023);
    assertThat(SizeClass.SMALL.valueBytes()).isEqualTo(33 - Keys.KEY_BYTES);
    assertThat(SizeClass.LARGE.valueBytes()).isEqualTo(1023 - Keys.KEY_BYTES);
  }

  @ParameterizedTest
  @EnumSource(KvMix.class)
  void drawsFollowTheMixProportions(KvMix mix) {
    int draws = 200_000;
    Map<SizeClass, Integer> counts = new EnumMap<>(SizeClass.class);
    SplittableRandom random = new SplittableRandom(mix.ordinal());
    for (int i = 0; i < draws; i++) {
      counts.merge(mix.draw(random), 1, Integer::sum);
    }
    assertThat(share(counts, SizeClass.SMALL, draws)).isCloseTo(mix.smallPercent(), within(0.5));
    assertThat(share(counts, SizeClass.MEDIUM, draws)).isCloseTo(mix.mediumPercent(), within(0.5));
    assertThat(share(counts, SizeClass.LARGE, draws)).isCloseTo(mix.largePercent(), within(0.5));
  }

  @Test
  void mixesMatchDesignSection8() {
    assertThat(
            new int[] {KvMix.SD.smallPercent(), KvMix.SD.mediumPercent(), KvMix.SD.largePercent()})
        .containsExactly(60, 20, 20);
    assertThat(
            new int[] {KvMix.MD.smallPercent(), KvMix.MD.mediumPercent(), KvMix.MD.largePercent()})
        .containsExactly(20, 60, 20);
    assertThat(
            new int[] {KvMix.LD.smallPercent(), KvMix.LD.mediumPercent(), KvMix.LD.largePercent()})
        .containsExactly(20, 20, 60);
    assertThat(KvMix.S.averageKvBytes()).isEqualTo(33.0);
    assertThat(KvMix.SD.averageKvBytes())
        .isCloseTo(0.6 * 33 + 0.2 * 123 + 0.2 * 1023, within(1e-9));
    assertThat(KvMix.parse("md")).isEqualTo(KvMix.MD);
    assertThatThrownBy(() -> KvMix.parse("XL")).hasMessageContaining("known: S, M, L, SD, MD, LD");
  }

  @Test
  void insertedRecordsGetTheSameSizeClassOnEveryRun() {
    Dataset first = new Dataset(KvMix.SD, 42, 10);
    Dataset second = new Dataset(KvMix.SD, 42, 10);
    Dataset otherSeed = new Dataset(KvMix.SD, 43, 10);
    int differences = 0;
    for (long record = 0; record < 1000; record++) {
      assertThat(first.insertClass(record)).isEqualTo(second.insertClass(record));
      differences += first.insertClass(record) != otherSeed.insertClass(record) ? 1 : 0;
    }
    assertThat(differences).isGreaterThan(100);
  }

  @Test
  void liveBytesFollowTheLatestWriteOfEachRecord() {
    Dataset dataset = new Dataset(KvMix.SD, 1, 10);
    for (int i = 0; i < 3; i++) {
      long number = dataset.inserts().allocate();
      dataset.written(number, SizeClass.SMALL);
      dataset.inserts().acknowledge(number);
    }
    dataset.written(1, SizeClass.LARGE);
    assertThat(dataset.liveKvBytes()).isEqualTo(33 + 1023 + 33);
  }

  private static double share(Map<SizeClass, Integer> counts, SizeClass sizeClass, int draws) {
    return 100.0 * counts.getOrDefault(sizeClass, 0) / draws;
  }
}
