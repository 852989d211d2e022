package io.kvs.bench.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ValuesTest {
  @Test
  void aWholeValueIsRecordedAsItsTokenAndValuesComeInEverySize() {
    SplittableRandom random = new SplittableRandom(1);
    int small = 0;
    int large = 0;
    for (int i = 0; i < 1_000; i++) {
      String token = Values.token(3, i, random);
      byte[] value = Values.value(token);
      small += value.length < 100 ? 1 : 0;
      large += value.length > 1_100 ? 1 : 0;
      assertThat(new String(Values.recorded(value), StandardCharsets.US_ASCII)).isEqualTo(token);
    }
    assertThat(small).isPositive();
    assertThat(large).isPositive();
  }

  @Test
  void aDamagedValueIsRecordedAsAValueNobodyWrote() {
    byte[] value = Values.value("c1w2l300");
    value[value.length - 1] ^= 1;
    assertThat(new String(Values.recorded(value), StandardCharsets.US_ASCII))
        .startsWith("not written by anyone: 309 bytes");
    byte[] cut = java.util.Arrays.copyOf(Values.value("c1w2l300"), 100);
    assertThat(new String(Values.recorded(cut), StandardCharsets.US_ASCII))
        .startsWith("not written by anyone");
    assertThat(
            new String(
                Values.recorded("junk".getBytes(StandardCharsets.US_ASCII)),
                StandardCharsets.US_ASCII))
        .startsWith("not written by anyone");
  }
}
