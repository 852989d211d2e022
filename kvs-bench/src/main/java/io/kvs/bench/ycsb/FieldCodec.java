package io.kvs.bench.ycsb;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The value a YCSB record is stored as in KVS: its fields, name/value pairs, in one byte array.
 *
 * <pre>
 * record := version count field*       version: the byte 0x01; count: how many fields
 * field  := nameLength name valueLength value
 * </pre>
 *
 * {@code count}, {@code nameLength} and {@code valueLength} are varints: unsigned LEB128 of a
 * non-negative int (7 bits a byte, lowest group first, the high bit set on every byte but the last;
 * at most 5 bytes). {@code name} is UTF-8, {@code value} raw bytes. Names are unique; their order
 * carries no meaning. A record of YCSB's default 10 fields of 100 bytes takes 1,082 bytes.
 */
final class FieldCodec {
  /** The first byte of every record: the format's version. */
  static final byte VERSION = 1;

  private FieldCodec() {}

  /** Encodes {@code fields} (names unique by construction of the map). */
  static byte[] encode(Map<String, byte[]> fields) {
    byte[][] names = new byte[fields.size()][];
    byte[][] values = new byte[fields.size()][];
    int size = 1 + varintSize(fields.size());
    int i = 0;
    for (Map.Entry<String, byte[]> field : fields.entrySet()) {
      names[i] = field.getKey().getBytes(StandardCharsets.UTF_8);
      values[i] = field.getValue();
      size += varintSize(names[i].length) + names[i].length;
      size += varintSize(values[i].length) + values[i].length;
      i++;
    }
    byte[] record = new byte[size];
    record[0] = VERSION;
    int at = putVarint(record, 1, names.length);
    for (i = 0; i < names.length; i++) {
      at = putBytes(record, at, names[i]);
      at = putBytes(record, at, values[i]);
    }
    return record;
  }

  /**
   * Decodes a record made by {@link #encode}.
   *
   * @return the fields in their stored order, modifiable
   * @throws IllegalArgumentException if {@code record} is not a record of this format
   */
  static Map<String, byte[]> decode(byte[] record) {
    if (record.length == 0 || record[0] != VERSION) {
      throw new IllegalArgumentException(
          "not a YCSB record: "
              + (record.length == 0 ? "empty" : "version byte " + record[0] + ", expected 1"));
    }
    Reader in = new Reader(record);
    int count = in.varint();
    Map<String, byte[]> fields = new LinkedHashMap<>();
    for (int i = 0; i < count; i++) {
      String name = new String(in.bytes(), StandardCharsets.UTF_8);
      if (fields.put(name, in.bytes()) != null) {
        throw new IllegalArgumentException("malformed YCSB record: field " + name + " twice");
      }
    }
    if (in.at != record.length) {
      throw new IllegalArgumentException(
          "malformed YCSB record: " + (record.length - in.at) + " bytes after the last field");
    }
    return fields;
  }

  private static int varintSize(int value) {
    int size = 1;
    while ((value >>>= 7) != 0) {
      size++;
    }
    return size;
  }

  private static int putVarint(byte[] out, int at, int value) {
    while ((value & ~0x7f) != 0) {
      out[at++] = (byte) ((value & 0x7f) | 0x80);
      value >>>= 7;
    }
    out[at++] = (byte) value;
    return at;
  }

  private static int putBytes(byte[] out, int at, byte[] bytes) {
    at = putVarint(out, at, bytes.length);
    System.arraycopy(bytes, 0, out, at, bytes.length);
    return at + bytes.length;
  }

  /** Reads varints and length-prefixed byte strings, checking every length against the end. */
  private static final class Reader {
    private final byte[] in;
    private int at = 1;

    Reader(byte[] in) {
      this.in = in;
    }

    int varint() {
      int value = 0;
      for (int shift = 0; ; shift += 7) {
        if (at >= in.length) {
          throw new IllegalArgumentException("malformed YCSB record: truncated length");
        }
        int b = in[at++] & 0xff;
        if (shift == 28 && (b & 0xf8) != 0) {
          // The fifth byte may only hold bits 28 to 30: a non-negative int.
          throw new IllegalArgumentException("malformed YCSB record: length out of range");
        }
        value |= (b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
          return value;
        }
      }
    }

    byte[] bytes() {
      int length = varint();
      if (length > in.length - at) {
        throw new IllegalArgumentException(
            "malformed YCSB record: " + length + " bytes announced, " + (in.length - at) + " left");
      }
      byte[] bytes = new byte[length];
      System.arraycopy(in, at, bytes, 0, length);
      at += length;
      return bytes;
    }
  }
}
