package io.kvs.core.cluster;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Key order and printing. Keys compare as unsigned bytes, lexicographically; in a range an empty
 * start means "from the first key" and an empty end "to the last".
 */
public final class Keys {
  private Keys() {}

  /** Unsigned lexicographic comparison. */
  public static int compare(byte[] a, byte[] b) {
    return Arrays.compareUnsigned(a, b);
  }

  /** Whether {@code key} is in {@code [start, end)}, an empty end being unbounded. */
  public static boolean inRange(byte[] key, byte[] start, byte[] end) {
    return compare(start, key) <= 0 && (end.length == 0 || compare(key, end) < 0);
  }

  /** Printable ASCII as is, anything else as {@code \xNN}; an empty key as {@code ""}. */
  public static String print(byte[] key) {
    if (key.length == 0) {
      return "\"\"";
    }
    StringBuilder out = new StringBuilder();
    for (byte b : key) {
      int c = b & 0xff;
      if (c >= 0x21 && c < 0x7f && c != '\\') {
        out.append((char) c);
      } else {
        out.append(String.format("\\x%02x", c));
      }
    }
    return out.toString();
  }

  /** UTF-8 bytes of {@code text}. */
  public static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
