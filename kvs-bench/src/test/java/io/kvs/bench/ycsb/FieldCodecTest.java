package io.kvs.bench.ycsb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FieldCodecTest {
  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void roundTripsFieldsOfEverySize() {
    Map<String, byte[]> fields = new LinkedHashMap<>();
    fields.put("field0", bytes("x".repeat(100)));
    fields.put("", new byte[0]);
    fields.put("naïve-名前", bytes("v"));
    fields.put("long", new byte[70_000]); // a three-byte length
    Arrays.fill(fields.get("long"), (byte) 0xff);

    Map<String, byte[]> decoded = FieldCodec.decode(FieldCodec.encode(fields));

    assertThat(decoded.keySet()).containsExactlyElementsOf(fields.keySet());
    fields.forEach((name, value) -> assertThat(decoded.get(name)).isEqualTo(value));
  }

  @Test
  void encodesTheDocumentedLayout() {
    Map<String, byte[]> fields = new LinkedHashMap<>();
    fields.put("ab", bytes("xyz"));
    assertThat(FieldCodec.encode(fields)).containsExactly(1, 1, 2, 'a', 'b', 3, 'x', 'y', 'z');
    assertThat(FieldCodec.encode(Map.of())).containsExactly(1, 0);

    Map<String, byte[]> ycsbDefault = new LinkedHashMap<>();
    for (int i = 0; i < 10; i++) {
      ycsbDefault.put("field" + i, new byte[100]);
    }
    assertThat(FieldCodec.encode(ycsbDefault)).hasSize(1_082);
  }

  @Test
  void rejectsMalformedRecords() {
    byte[][] malformed = {
      {}, // empty
      {2, 0}, // another version
      {1}, // no count
      {1, 1, 5, 'a'}, // name longer than what is left
      {1, 1, 1, 'a'}, // no value length
      {1, 0, 0}, // a byte after the last field
      {1, 1, 1, 'a', 0, 1, 'b', 0}, // two fields where one was announced
      {1, 2, 1, 'a', 0, 1, 'a', 0}, // a field twice
      {1, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x0f}, // count above 2^31 - 1
      {1, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0}, // six-byte count
    };
    for (byte[] record : malformed) {
      assertThatThrownBy(() -> FieldCodec.decode(record))
          .as(Arrays.toString(record))
          .isInstanceOf(IllegalArgumentException.class);
    }
  }
}
