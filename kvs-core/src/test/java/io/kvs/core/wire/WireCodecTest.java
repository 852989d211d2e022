package io.kvs.core.wire;

import static io.kvs.core.wire.WireVectors.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.InvalidRequestException;
import io.kvs.core.KeyValue;
import io.kvs.core.StatusCode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WireCodecTest {
  /** The fields of a decoded request in the vector file's notation. */
  private static Map<String, String> describe(Request request) {
    Map<String, String> fields = new HashMap<>();
    fields.put("opcode", request.opcode().name());
    fields.put("request_id", Long.toHexString(request.requestId()));
    fields.put("region_id", Long.toHexString(request.regionId()));
    fields.put("epoch", Long.toUnsignedString(request.epoch()));
    switch (request.opcode()) {
      case NOOP -> {}
      case PUT -> {
        fields.put("key", hex(request.key()));
        fields.put("value", hex(request.value()));
      }
      case GET, DELETE -> fields.put("key", hex(request.key()));
      case SCAN, SCAN_REVERSE -> {
        fields.put("start", hex(request.key()));
        fields.put("end", request.end() == null ? "none" : hex(request.end()));
        fields.put("limit", Integer.toString(request.limit()));
        fields.put("max_bytes", Integer.toString(request.maxBytes()));
      }
      case MULTI_GET -> {
        List<String> keys = new ArrayList<>();
        request.keys().forEach(key -> keys.add(hex(key)));
        fields.put("keys", String.join(",", keys));
      }
      case COMPARE_AND_SET -> {
        fields.put("key", hex(request.key()));
        fields.put("expected", request.expected() == null ? "absent" : hex(request.expected()));
        fields.put("value", request.value() == null ? "absent" : hex(request.value()));
        fields.put("write_id", writeId(request.writeId()));
      }
      case INCREMENT -> {
        fields.put("key", hex(request.key()));
        fields.put("delta", Long.toString(request.delta()));
        fields.put("write_id", writeId(request.writeId()));
      }
      case BATCH -> {
        List<String> writes = new ArrayList<>();
        request
            .writes()
            .forEach(
                w ->
                    writes.add(
                        w.put()
                            ? "put:" + hex(w.key()) + ":" + hex(w.value())
                            : "delete:" + hex(w.key())));
        fields.put("writes", String.join(",", writes));
      }
    }
    return fields;
  }

  /** "-" for none, else client (16 hex digits):sequence:floor:retry (0 or 1). */
  private static String writeId(WriteId id) {
    if (id.equals(WriteId.NONE)) {
      return "-";
    }
    return String.format("%016x", id.client())
        + ":"
        + Long.toUnsignedString(id.sequence())
        + ":"
        + Long.toUnsignedString(id.floor())
        + ":"
        + (id.retry() ? "1" : "0");
  }

  private static Map<String, String> describe(Reply reply) {
    Map<String, String> fields = new HashMap<>();
    fields.put("opcode", reply.opcode().name());
    fields.put("status", reply.status().name());
    fields.put("request_id", Long.toHexString(reply.requestId()));
    if (reply.status() != StatusCode.OK) {
      fields.put("message", hex(reply.message().getBytes(java.nio.charset.StandardCharsets.UTF_8)));
      return fields;
    }
    switch (reply.opcode()) {
      case GET -> fields.put("value", hex(reply.value()));
      case SCAN, SCAN_REVERSE -> {
        fields.put("more", reply.more() ? "1" : "0");
        List<String> pairs = new ArrayList<>();
        reply.pairs().forEach(p -> pairs.add(hex(p.key()) + ":" + hex(p.value())));
        fields.put("pairs", pairs.isEmpty() ? "none" : String.join(",", pairs));
      }
      case MULTI_GET -> {
        List<String> values = new ArrayList<>();
        reply.values().forEach(v -> values.add(v == null ? "absent" : hex(v)));
        fields.put("values", String.join(",", values));
      }
      case COMPARE_AND_SET -> {
        fields.put("applied", reply.applied() ? "1" : "0");
        fields.put("current", reply.current() == null ? "absent" : hex(reply.current()));
        fields.put("lsn", Long.toUnsignedString(reply.lsn()));
      }
      case INCREMENT -> {
        fields.put("counter", Long.toString(reply.counter()));
        fields.put("lsn", Long.toUnsignedString(reply.lsn()));
      }
      default -> {}
    }
    return fields;
  }

  @Test
  void sharedVectorsDecodeAndReencodeExactly() {
    List<WireVectors.Vector> vectors = WireVectors.load();
    assertThat(vectors).hasSizeGreaterThanOrEqualTo(30);
    for (WireVectors.Vector vector : vectors) {
      if (vector.invalid()) {
        assertThatThrownBy(
                () ->
                    (vector.request()
                            ? (Runnable) () -> WireCodec.decodeRequest(vector.bytes())
                            : (Runnable) () -> WireCodec.decodeReply(vector.bytes()))
                        .run())
            .as(vector.name())
            .isInstanceOf(InvalidRequestException.class)
            .hasMessageContaining("malformed message")
            .satisfies(
                e ->
                    assertThat(((InvalidRequestException) e).status())
                        .isEqualTo(StatusCode.INVALID_ARGUMENT));
        continue;
      }
      byte[] encoded;
      if (vector.request()) {
        Request request = WireCodec.decodeRequest(vector.bytes());
        assertThat(describe(request)).as(vector.name()).isEqualTo(vector.fields());
        encoded = WireCodec.encode(request);
      } else {
        Reply reply = WireCodec.decodeReply(vector.bytes());
        assertThat(describe(reply)).as(vector.name()).isEqualTo(vector.fields());
        encoded = WireCodec.encode(reply);
      }
      assertThat(hex(encoded)).as(vector.name()).isEqualTo(hex(vector.bytes()));
    }
  }

  @Test
  void everyTruncationOfAValidMessageIsRejected() {
    for (WireVectors.Vector vector : WireVectors.load()) {
      if (vector.invalid()) {
        continue;
      }
      for (int size = 0; size < vector.bytes().length; size++) {
        byte[] cut = Arrays.copyOf(vector.bytes(), size);
        Runnable decode =
            vector.request()
                ? () -> WireCodec.decodeRequest(cut)
                : () -> WireCodec.decodeReply(cut);
        assertThatThrownBy(decode::run)
            .as(vector.name() + " cut to " + size)
            .isInstanceOf(InvalidRequestException.class);
      }
    }
  }

  @Test
  void factoriesRefuseWhatTheProtocolCannotCarry() {
    byte[] key = new byte[WireCodec.KEY_BYTES_MAX + 1];
    assertThatThrownBy(() -> Request.get(1, 1, 1, key))
        .isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("exceeds 4096");
    assertThatThrownBy(() -> Request.put(1, 1, 1, new byte[0], new byte[1]))
        .isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("empty");
    assertThatThrownBy(
            () -> Request.put(1, 1, 1, new byte[1], new byte[WireCodec.VALUE_BYTES_MAX + 1]))
        .isInstanceOf(InvalidRequestException.class);
    assertThatThrownBy(() -> Request.scan(1, 1, 1, new byte[0], null, 0, 10))
        .isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("limit");
    assertThatThrownBy(() -> Request.multiGet(1, 1, 1, List.of()))
        .isInstanceOf(InvalidRequestException.class);
    assertThatThrownBy(() -> Reply.error(Opcode.GET, StatusCode.OK, 1, "x"))
        .isInstanceOf(IllegalArgumentException.class);
    // An overlong error message is cut, not refused.
    Reply error = Reply.error(Opcode.GET, StatusCode.BUSY, 1, "é".repeat(5000));
    assertThat(error.message().getBytes(java.nio.charset.StandardCharsets.UTF_8).length)
        .isLessThanOrEqualTo(WireCodec.MESSAGE_TEXT_BYTES_MAX);
    assertThat(WireCodec.decodeReply(WireCodec.encode(error)).message()).isEqualTo(error.message());
  }

  @Test
  void largestMessagesRoundTrip() {
    byte[] key = new byte[WireCodec.KEY_BYTES_MAX];
    byte[] value = new byte[WireCodec.VALUE_BYTES_MAX];
    value[value.length - 1] = 7;
    byte[] put = WireCodec.encode(Request.put(1, 2, 3, key, value));
    assertThat(put.length).isLessThanOrEqualTo(WireCodec.MESSAGE_BYTES_MAX);
    assertThat(WireCodec.decodeRequest(put).value()).isEqualTo(value);
    List<KeyValue> pairs = new ArrayList<>();
    for (int i = 0; i < WireCodec.SCAN_LIMIT_MAX; i++) {
      pairs.add(new KeyValue(new byte[] {(byte) i, (byte) (i >> 8)}, new byte[100]));
    }
    Reply scan = WireCodec.decodeReply(WireCodec.encode(Reply.scan(9, pairs, true)));
    assertThat(scan.pairs()).containsExactlyElementsOf(pairs);
    assertThat(scan.more()).isTrue();
  }
}
