package io.kvs.master;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Split points from the command line: comma-separated UTF-8 keys with {@code \xNN} escapes. */
final class SplitPoints {
  private SplitPoints() {}

  static List<byte[]> parse(String text) {
    List<byte[]> points = new ArrayList<>();
    for (String point : text.split(",", -1)) {
      points.add(unescape(point));
    }
    return points;
  }

  static byte[] unescape(String text) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = 0; i < text.length(); ) {
      if (text.startsWith("\\x", i) && i + 4 <= text.length()) {
        try {
          out.write(Integer.parseInt(text.substring(i + 2, i + 4), 16));
          i += 4;
          continue;
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("bad escape in split point " + text, e);
        }
      }
      int codePoint = text.codePointAt(i);
      byte[] bytes = new String(Character.toChars(codePoint)).getBytes(StandardCharsets.UTF_8);
      out.write(bytes, 0, bytes.length);
      i += Character.charCount(codePoint);
    }
    return out.toByteArray();
  }
}
