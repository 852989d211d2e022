package io.kvs.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KeysTest {
  @Test
  void keysAreYcsbStyleAndFixedSize() {
    for (long number : new long[] {0, 1, 2, 1_000_000, Long.MAX_VALUE}) {
      String key = Keys.toString(number);
      assertThat(key).hasSize(Keys.KEY_BYTES).startsWith("user");
      assertThat(key.substring(4)).containsOnlyDigits();
      assertThat(key.substring(4)).isEqualTo(digits(number));
    }
  }

  @Test
  void consecutiveRecordsAreScatteredAndDistinct() {
    Set<String> seen = new HashSet<>();
    int ascending = 0;
    String previous = "";
    for (long number = 0; number < 100_000; number++) {
      String key = Keys.toString(number);
      assertThat(seen.add(key)).isTrue();
      ascending += key.compareTo(previous) > 0 ? 1 : 0;
      previous = key;
    }
    // Hashed, not ordered: about half of the consecutive pairs ascend.
    assertThat(ascending).isBetween(45_000, 55_000);
  }

  @Test
  void hashIsFnv1a64() {
    // FNV-1a of eight zero bytes, computed by hand from the published constants.
    long hash = 0xcbf29ce484222325L;
    for (int i = 0; i < 8; i++) {
      hash *= 0x100000001b3L;
    }
    assertThat(Keys.fnv1a64(0)).isEqualTo(hash);
  }

  private static String digits(long number) {
    String unsigned = Long.toUnsignedString(Keys.fnv1a64(number));
    return "0".repeat(20 - unsigned.length()) + unsigned;
  }
}
