package io.kvs.core.wire;

import java.util.List;

/**
 * A request of the wire protocol (docs/PROTOCOL.md). Build one with the factories; {@link
 * WireCodec} encodes and decodes it. Byte arrays are not copied: do not change them afterwards.
 *
 * @param opcode the operation
 * @param requestId chosen by the client, echoed by the reply
 * @param regionId the region the client routes to
 * @param epoch the region epoch of the client's region map
 * @param key PUT, GET, DELETE, COMPARE_AND_SET, INCREMENT: the key; SCAN, SCAN_REVERSE: the start
 *     key, the lower bound (empty: from the first key); else empty
 * @param value PUT: the value; COMPARE_AND_SET: the value to write, or null to delete the key; else
 *     empty
 * @param end SCAN, SCAN_REVERSE: the exclusive end key, or null for no end bound; else null
 * @param limit SCAN, SCAN_REVERSE: the most pairs to return; else 0
 * @param maxBytes SCAN, SCAN_REVERSE: stop once the pairs' keys and values reach this; else 0
 * @param keys MULTI_GET: the keys; else empty
 * @param expected COMPARE_AND_SET: the value the key must hold, or null for none; else null
 * @param delta INCREMENT: what to add to the counter; else 0
 * @param writeId COMPARE_AND_SET, INCREMENT: the write's id ({@link WriteId#NONE}: none); else NONE
 * @param writes BATCH: the writes, in order; else empty
 */
public record Request(
    Opcode opcode,
    long requestId,
    long regionId,
    long epoch,
    byte[] key,
    byte[] value,
    byte[] end,
    int limit,
    int maxBytes,
    List<byte[]> keys,
    byte[] expected,
    long delta,
    WriteId writeId,
    List<BatchWrite> writes) {
  private static final byte[] NONE = new byte[0];

  /** Checks the fields against the protocol's limits. */
  public Request {
    if (writes == null) {
      writes = List.of();
    }
    WireCodec.validate(opcode, key, value, end, limit, maxBytes, keys, expected, delta, writes);
    keys = List.copyOf(keys);
    writes = List.copyOf(writes);
    if (writeId == null) {
      writeId = WriteId.NONE;
    }
    if (!writeId.equals(WriteId.NONE)
        && opcode != Opcode.COMPARE_AND_SET
        && opcode != Opcode.INCREMENT) {
      throw new IllegalArgumentException(opcode + " carries no write id");
    }
  }

  Request(
      Opcode opcode,
      long requestId,
      long regionId,
      long epoch,
      byte[] key,
      byte[] value,
      byte[] end,
      int limit,
      int maxBytes,
      List<byte[]> keys) {
    this(
        opcode,
        requestId,
        regionId,
        epoch,
        key,
        value,
        end,
        limit,
        maxBytes,
        keys,
        null,
        0,
        WriteId.NONE,
        List.of());
  }

  /** A no-op. */
  public static Request noop(long requestId) {
    return new Request(Opcode.NOOP, requestId, 0, 0, NONE, NONE, null, 0, 0, List.of());
  }

  /** Puts {@code value} under {@code key}. */
  public static Request put(long requestId, long regionId, long epoch, byte[] key, byte[] value) {
    return new Request(Opcode.PUT, requestId, regionId, epoch, key, value, null, 0, 0, List.of());
  }

  /** Gets {@code key}'s value. */
  public static Request get(long requestId, long regionId, long epoch, byte[] key) {
    return new Request(Opcode.GET, requestId, regionId, epoch, key, NONE, null, 0, 0, List.of());
  }

  /** Deletes {@code key}. */
  public static Request delete(long requestId, long regionId, long epoch, byte[] key) {
    return new Request(Opcode.DELETE, requestId, regionId, epoch, key, NONE, null, 0, 0, List.of());
  }

  /**
   * Scans from {@code start} (inclusive; empty: the region's first key) to {@code end} (exclusive;
   * null: no bound), at most {@code limit} pairs and about {@code maxBytes} of keys and values.
   */
  public static Request scan(
      long requestId,
      long regionId,
      long epoch,
      byte[] start,
      byte[] end,
      int limit,
      int maxBytes) {
    return new Request(
        Opcode.SCAN, requestId, regionId, epoch, start, NONE, end, limit, maxBytes, List.of());
  }

  /**
   * Scans down from the last key below {@code end} (exclusive; null: no bound) to {@code start}
   * (inclusive; empty: the region's first key), in descending key order, at most {@code limit}
   * pairs and about {@code maxBytes} of keys and values.
   */
  public static Request scanReverse(
      long requestId,
      long regionId,
      long epoch,
      byte[] start,
      byte[] end,
      int limit,
      int maxBytes) {
    return new Request(
        Opcode.SCAN_REVERSE,
        requestId,
        regionId,
        epoch,
        start,
        NONE,
        end,
        limit,
        maxBytes,
        List.of());
  }

  /** Applies {@code writes} (all keys of one region) in order, all or nothing. */
  public static Request batch(long requestId, long regionId, long epoch, List<BatchWrite> writes) {
    return new Request(
        Opcode.BATCH,
        requestId,
        regionId,
        epoch,
        NONE,
        NONE,
        null,
        0,
        0,
        List.of(),
        null,
        0,
        WriteId.NONE,
        writes);
  }

  /** Gets the values of {@code keys}. */
  public static Request multiGet(long requestId, long regionId, long epoch, List<byte[]> keys) {
    return new Request(Opcode.MULTI_GET, requestId, regionId, epoch, NONE, NONE, null, 0, 0, keys);
  }

  /**
   * Writes {@code value} under {@code key} (null: deletes it) if the key holds {@code expected}
   * (null: holds no value), atomically.
   */
  public static Request compareAndSet(
      long requestId, long regionId, long epoch, byte[] key, byte[] expected, byte[] value) {
    return new Request(
        Opcode.COMPARE_AND_SET,
        requestId,
        regionId,
        epoch,
        key,
        value,
        null,
        0,
        0,
        List.of(),
        expected,
        0,
        WriteId.NONE,
        List.of());
  }

  /** Adds {@code delta} to {@code key}'s 8-byte counter (none counts as 0), atomically. */
  public static Request increment(
      long requestId, long regionId, long epoch, byte[] key, long delta) {
    return new Request(
        Opcode.INCREMENT,
        requestId,
        regionId,
        epoch,
        key,
        NONE,
        null,
        0,
        0,
        List.of(),
        null,
        delta,
        WriteId.NONE,
        List.of());
  }

  /** This request with another id (a client assigns ids as it sends). */
  public Request withRequestId(long id) {
    return new Request(
        opcode, id, regionId, epoch, key, value, end, limit, maxBytes, keys, expected, delta,
        writeId, writes);
  }

  /** This conditional write with write id {@code id}. */
  public Request withWriteId(WriteId id) {
    return new Request(
        opcode, requestId, regionId, epoch, key, value, end, limit, maxBytes, keys, expected, delta,
        id, writes);
  }
}
