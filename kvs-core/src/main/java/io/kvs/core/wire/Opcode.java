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
  MULTI_GET(5);

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
