package io.kvs.bench.history;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;

/**
 * An immutable byte string compared by contents: the keys and values of a recorded {@link History}.
 * {@link #toString()} prints printable ASCII as is and anything else as hex, so checker
 * explanations stay readable for the harness's text values ("c3-17") and for binary ones.
 */
public final class Bytes implements Comparable<Bytes> {
  private static final int PRINT_LIMIT = 48;

  private final byte[] data;
  private final int hash;

  private Bytes(byte[] data) {
    this.data = data;
    this.hash = Arrays.hashCode(data);
  }

  /** A copy of {@code data}: later changes to the array do not affect the returned value. */
  public static Bytes of(byte[] data) {
    return new Bytes(data.clone());
  }

  /** The UTF-8 encoding of {@code text}. */
  public static Bytes utf8(String text) {
    return new Bytes(text.getBytes(StandardCharsets.UTF_8));
  }

  /** Decodes standard base64 (the JSON lines encoding of {@link History}). */
  public static Bytes fromBase64(String base64) {
    return new Bytes(Base64.getDecoder().decode(base64));
  }

  /** The contents as standard base64. */
  public String toBase64() {
    return Base64.getEncoder().encodeToString(data);
  }

  /** A copy of the contents. */
  public byte[] toArray() {
    return data.clone();
  }

  /** The number of bytes. */
  public int length() {
    return data.length;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof Bytes that && hash == that.hash && Arrays.equals(data, that.data);
  }

  @Override
  public int hashCode() {
    return hash;
  }

  @Override
  public int compareTo(Bytes other) {
    return Arrays.compareUnsigned(data, other.data);
  }

  /** Printable ASCII as is (quoted), anything else as 0x-hex; long values are abbreviated. */
  @Override
  public String toString() {
    boolean printable = true;
    for (byte b : data) {
      if (b < 0x20 || b > 0x7e) {
        printable = false;
        break;
      }
    }
    int shown = Math.min(data.length, PRINT_LIMIT);
    StringBuilder out = new StringBuilder(shown * 2 + 16);
    if (printable) {
      out.append('"').append(new String(data, 0, shown, StandardCharsets.US_ASCII)).append('"');
    } else {
      out.append("0x");
      for (int i = 0; i < shown; i++) {
        out.append(Character.forDigit((data[i] >> 4) & 0xf, 16))
            .append(Character.forDigit(data[i] & 0xf, 16));
      }
    }
    if (shown < data.length) {
      out.append("...(").append(data.length).append(" bytes)");
    }
    return out.toString();
  }
}
