package io.kvs.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonLineTest {
  @Test
  void writesFieldsInOrderWithNestedObjects() {
    JsonLine line =
        new JsonLine()
            .put("system", "kvs")
            .put("ops_per_sec", 123456.5)
            .put("count", 42L)
            .put("whole", 3.0)
            .put("ok", true)
            .put("missing", null)
            .put("nested", new JsonLine().put("p50_us", 0.25))
            .put("map", Map.of("read", 1));
    assertThat(line.toString())
        .isEqualTo(
            "{\"system\":\"kvs\",\"ops_per_sec\":123457,\"count\":42,\"whole\":3,\"ok\":true,"
                + "\"missing\":null,\"nested\":{\"p50_us\":0.25},\"map\":{\"read\":1}}");
  }

  @Test
  void escapesStringsAndNullsNonFiniteNumbers() {
    JsonLine line =
        new JsonLine().put("text", "a\"b\\c\nd\u0001").put("nan", Double.NaN).put("small", 1.25e-7);
    assertThat(line.toString())
        .isEqualTo("{\"text\":\"a\\\"b\\\\c\\nd\\u0001\",\"nan\":null,\"small\":0.000000125}");
  }

  @Test
  void rejectsUnsupportedValues() {
    assertThatThrownBy(() -> new JsonLine().put("x", new Object()))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
