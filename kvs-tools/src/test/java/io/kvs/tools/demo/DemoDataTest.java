package io.kvs.tools.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.Keys;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DemoDataTest {
  @Test
  void keysReadBackAsTheirNumbersAndSpreadOverRegions() {
    List<byte[]> splits = ClusterConfig.uniformSplits(16);
    Map<Integer, Integer> perRegion = new HashMap<>();
    for (int i = 0; i < 20_000; i++) {
      byte[] key = DemoData.key(i);
      assertThat(DemoData.keyNumber(key)).isEqualTo(i);
      int region = 0;
      while (region < splits.size() && Keys.compare(key, splits.get(region)) >= 0) {
        region++;
      }
      perRegion.merge(region, 1, Integer::sum);
    }
    assertThat(perRegion).hasSize(16);
    assertThat(perRegion.values()).allSatisfy(count -> assertThat(count).isBetween(1000, 1500));
    assertThat(DemoData.keyNumber("xxuser12".getBytes())).isEqualTo(-1);
    assertThat(DemoData.keyNumber(new byte[] {1})).isEqualTo(-1);
  }

  @Test
  void valuesCarryTheirKeyAndVersion() {
    for (int i = 0; i < 1000; i++) {
      byte[] value = DemoData.value(i, i % 7);
      assertThat(value.length).isBetween(DemoData.MIN_VALUE_BYTES, DemoData.MAX_VALUE_BYTES);
      assertThat(DemoData.versionOf(i, value)).isEqualTo(i % 7);
      assertThat(DemoData.versionOf(i + 1, value)).isEqualTo(-1);
    }
    byte[] damaged = DemoData.value(5, 3);
    damaged[damaged.length - 1] ^= 1;
    assertThat(DemoData.versionOf(5, damaged)).isEqualTo(-1);
  }

  @Test
  void expectedValuesAreExactOrAnyVersionAfterAFailedWrite() {
    Expected expected = new Expected(3);
    expected.written(0, 0);
    expected.written(0, 2);
    assertThat(expected.matches(0, DemoData.value(0, 2), true)).isTrue();
    assertThat(expected.matches(0, DemoData.value(0, 1), true)).isFalse();
    assertThat(expected.matches(0, DemoData.value(0, 1), false)).isTrue();
    assertThat(expected.matches(0, null, false)).isFalse();
    expected.failed(1, 0);
    assertThat(expected.matches(1, null, true)).isTrue();
    assertThat(expected.matches(1, DemoData.value(1, 0), true)).isTrue();
    assertThat(expected.matches(1, DemoData.value(2, 0), true)).isFalse();
  }
}
