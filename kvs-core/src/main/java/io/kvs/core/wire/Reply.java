package io.kvs.core.wire;

import io.kvs.core.KeyValue;
import io.kvs.core.StatusCode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A reply of the wire protocol (docs/PROTOCOL.md). Byte arrays are not copied.
 *
 * @param opcode the request's operation
 * @param status OK, or why the request failed
 * @param requestId the request's id
 * @param message not OK: the server's explanation; else empty
 * @param value GET: the value; else empty
 * @param pairs SCAN: the pairs, in key order; SCAN_REVERSE: in descending key order; else empty
 * @param more SCAN: whether the range holds pairs after the last one returned; SCAN_REVERSE: before
 *     it
 * @param values MULTI_GET: the values of the request's first {@code values.size()} keys, null for a
 *     key without a value; else empty
 * @param applied COMPARE_AND_SET: whether the write was made; else false
 * @param current COMPARE_AND_SET not applied: the key's value then, null for none; else null
 * @param counter INCREMENT: the counter's value after it; else 0
 * @param lsn COMPARE_AND_SET, INCREMENT: the region's last LSN when it answered (a floor for the
 *     client's retries: {@link WriteId}); else 0
 */
public record Reply(
    Opcode opcode,
    StatusCode status,
    long requestId,
    String message,
    byte[] value,
    List<KeyValue> pairs,
    boolean more,
    List<byte[]> values,
    boolean applied,
    byte[] current,
    long counter,
    long lsn) {
  private static final byte[] NONE = new byte[0];

  /** Checks the fields against the protocol's limits. */
  public Reply {
    WireCodec.validate(opcode, status, message, value, pairs, values, applied, current);
    pairs = List.copyOf(pairs);
    values = Collections.unmodifiableList(new ArrayList<>(values)); // may hold nulls
  }

  Reply(
      Opcode opcode,
      StatusCode status,
      long requestId,
      String message,
      byte[] value,
      List<KeyValue> pairs,
      boolean more,
      List<byte[]> values) {
    this(opcode, status, requestId, message, value, pairs, more, values, false, null, 0, 0);
  }

  /**
   * A COMPARE_AND_SET's outcome: applied, or not and the key's value then ({@code current}, null
   * for none).
   */
  public static Reply compareAndSet(long requestId, boolean applied, byte[] current, long lsn) {
    return new Reply(
        Opcode.COMPARE_AND_SET,
        StatusCode.OK,
        requestId,
        "",
        NONE,
        List.of(),
        false,
        List.of(),
        applied,
        current,
        0,
        lsn);
  }

  /** An INCREMENT's sum. */
  public static Reply increment(long requestId, long counter, long lsn) {
    return new Reply(
        Opcode.INCREMENT,
        StatusCode.OK,
        requestId,
        "",
        NONE,
        List.of(),
        false,
        List.of(),
        false,
        null,
        counter,
        lsn);
  }

  /** Success without a body (NOOP, PUT, DELETE, BATCH). */
  public static Reply ok(Opcode opcode, long requestId) {
    return new Reply(opcode, StatusCode.OK, requestId, "", NONE, List.of(), false, List.of());
  }

  /** A GET's value. */
  public static Reply value(long requestId, byte[] value) {
    return new Reply(Opcode.GET, StatusCode.OK, requestId, "", value, List.of(), false, List.of());
  }

  /** A SCAN's pairs. */
  public static Reply scan(long requestId, List<KeyValue> pairs, boolean more) {
    return new Reply(Opcode.SCAN, StatusCode.OK, requestId, "", NONE, pairs, more, List.of());
  }

  /** A SCAN_REVERSE's pairs, in descending key order. */
  public static Reply scanReverse(long requestId, List<KeyValue> pairs, boolean more) {
    return new Reply(
        Opcode.SCAN_REVERSE, StatusCode.OK, requestId, "", NONE, pairs, more, List.of());
  }

  /** A MULTI_GET's values (null: not found). */
  public static Reply multiGet(long requestId, List<byte[]> values) {
    return new Reply(
        Opcode.MULTI_GET, StatusCode.OK, requestId, "", NONE, List.of(), false, values);
  }

  /**
   * A failure. A message longer than the protocol allows is cut (at a character boundary) rather
   * than refused: the status is what matters.
   */
  public static Reply error(Opcode opcode, StatusCode status, long requestId, String message) {
    if (status == StatusCode.OK) {
      throw new IllegalArgumentException("an error reply needs an error status");
    }
    return new Reply(
        opcode,
        status,
        requestId,
        WireCodec.fitMessage(message),
        NONE,
        List.of(),
        false,
        List.of());
  }
}
