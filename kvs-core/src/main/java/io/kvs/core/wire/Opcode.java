package io.kvs.core.wire;

/** The operation of a request (docs/PROTOCOL.md); a reply carries its request's. */
public enum Opcode {
  /** Does nothing; answered with an empty OK reply (the fabric protocol's wrap-around). */
  NOOP(0),
  /** Inserts or overwrites a key's value. */
  PUT(1),
  /** Reads a key's value. */
  GET(2),
  /** Removes a key. */
  DELETE(3),
  /** Reads the pairs of a key range, in key order, up to a limit. */
  SCAN(4),
  /** Reads several keys' values. */
  MULTI_GET(5),
  /**
   * Writes (or deletes) a key's value if it holds the value expected (or none), atomically; the
   * reply says whether it did, and the value found when not.
   */
  COMPARE_AND_SET(6),
  /** Adds to a key's 8-byte counter (none counts as 0), atomically; the reply holds the sum. */
  INCREMENT(7),
  /** Puts and deletes of one region's keys, applied in order, all or nothing. */
  BATCH(8),
  /** Reads the pairs of a key range in descending key order, from its end down, up to a limit. */
  SCAN_REVERSE(9);

  private final int code;

  Opcode(int code) {
    this.code = code;
  }

  /** The value on the wire. */
  public int code() {
    return code;
  }

  /** The opcode with this wire value, or null if there is none. */
  public static Opcode fromCode(int code) {
    for (Opcode opcode : values()) {
      if (opcode.code == code) {
        return opcode;
      }
    }
    return null;
  }
}
