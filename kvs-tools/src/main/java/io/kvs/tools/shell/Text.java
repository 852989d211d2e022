package io.kvs.tools.shell;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * How the shell reads and prints keys and values: UTF-8 text, with escapes for any other byte.
 *
 * <p>Input: words are separated by blanks; double quotes group blanks into a word ({@code "a b"})
 * and {@code ""} is the empty word. Escapes, inside quotes or not: {@code \xNN} (one byte, two hex
 * digits), {@code \\}, {@code \"}, {@code \n}, {@code \t}.
 *
 * <p>Output ({@link #format}): printable characters as they are; backslash, double quote, newline
 * and tab as their escapes; every byte that is not part of a printable UTF-8 character as {@code
 * \xNN}; the whole in double quotes if it is empty or holds a blank. What {@link #format} prints
 * reads back ({@link #words}) as the same bytes.
 */
final class Text {
  private static final HexFormat HEX = HexFormat.of();

  private Text() {}

  /**
   * Splits {@code line} into words and decodes each.
   *
   * @throws IllegalArgumentException for an unterminated quote or a bad escape, naming the column
   */
  static List<byte[]> words(String line) {
    return parse(line, true);
  }

  /** Decodes {@code text} as one word: blanks are part of it, quotes and escapes work as usual. */
  static byte[] word(String text) {
    List<byte[]> words = parse(text, false);
    return words.isEmpty() ? new byte[0] : words.get(0);
  }

  private static List<byte[]> parse(String line, boolean split) {
    List<byte[]> words = new ArrayList<>();
    ByteArrayOutputStream word = new ByteArrayOutputStream();
    boolean inWord = !split;
    boolean quoted = false;
    int quoteColumn = 0;
    int i = 0;
    while (i < line.length()) {
      int c = line.codePointAt(i);
      int next = i + Character.charCount(c);
      if (split && !quoted && Character.isWhitespace(c)) {
        if (inWord) {
          words.add(word.toByteArray());
          word.reset();
          inWord = false;
        }
      } else if (c == '"') {
        inWord = true;
        quoted = !quoted;
        quoteColumn = i + 1;
      } else if (c == '\\') {
        inWord = true;
        next = escape(line, i, word);
      } else {
        inWord = true;
        word.writeBytes(new String(Character.toChars(c)).getBytes(StandardCharsets.UTF_8));
      }
      i = next;
    }
    if (quoted) {
      throw new IllegalArgumentException("unterminated quote at column " + quoteColumn);
    }
    if (inWord) {
      words.add(word.toByteArray());
    }
    return words;
  }

  /** Decodes the escape starting at {@code at} (a backslash); returns the index after it. */
  private static int escape(String line, int at, ByteArrayOutputStream out) {
    char kind = at + 1 < line.length() ? line.charAt(at + 1) : ' ';
    switch (kind) {
      case '\\', '"' -> out.write(kind);
      case 'n' -> out.write('\n');
      case 't' -> out.write('\t');
      case 'x' -> {
        String digits = line.substring(at + 2, Math.min(line.length(), at + 4));
        if (digits.length() != 2 || !HexFormat.isHexDigit(digits.charAt(0))) {
          throw badEscape(line, at);
        }
        if (!HexFormat.isHexDigit(digits.charAt(1))) {
          throw badEscape(line, at);
        }
        out.write(HexFormat.fromHexDigits(digits));
        return at + 4;
      }
      default -> throw badEscape(line, at);
    }
    return at + 2;
  }

  private static IllegalArgumentException badEscape(String line, int at) {
    String escape = line.substring(at, Math.min(line.length(), at + 4)).strip();
    return new IllegalArgumentException(
        "bad escape '"
            + escape
            + "' at column "
            + (at + 1)
            + " (escapes: \\xNN for a byte, \\\\, \\\", \\n, \\t)");
  }

  /** {@code bytes} as the shell prints them; reads back as the same bytes. */
  static String format(byte[] bytes) {
    StringBuilder out = new StringBuilder(bytes.length + 8);
    boolean quote = bytes.length == 0;
    int i = 0;
    while (i < bytes.length) {
      int b = bytes[i] & 0xff;
      if (b < 0x80) {
        switch (b) {
          case ' ' -> {
            out.append(' ');
            quote = true;
          }
          case '\\' -> out.append("\\\\");
          case '"' -> out.append("\\\"");
          case '\n' -> out.append("\\n");
          case '\t' -> out.append("\\t");
          default -> {
            if (b > 0x20 && b < 0x7f) {
              out.append((char) b);
            } else {
              hex(out, b);
            }
          }
        }
        i++;
        continue;
      }
      int length = sequenceLength(b);
      if (length > 0 && i + length <= bytes.length) {
        String character = new String(bytes, i, length, StandardCharsets.UTF_8);
        // Only a well-formed, printable character is printed as such (a malformed sequence
        // decodes to U+FFFD, which encodes to other bytes).
        if (character.codePointCount(0, character.length()) == 1
            && printable(character.codePointAt(0))
            && Arrays.equals(
                character.getBytes(StandardCharsets.UTF_8),
                Arrays.copyOfRange(bytes, i, i + length))) {
          out.append(character);
          i += length;
          continue;
        }
      }
      hex(out, b);
      i++;
    }
    return quote ? "\"" + out + "\"" : out.toString();
  }

  private static int sequenceLength(int lead) {
    if (lead >= 0xc2 && lead < 0xe0) {
      return 2;
    }
    if (lead >= 0xe0 && lead < 0xf0) {
      return 3;
    }
    if (lead >= 0xf0 && lead < 0xf5) {
      return 4;
    }
    return 0;
  }

  private static boolean printable(int codePoint) {
    return switch (Character.getType(codePoint)) {
      case Character.CONTROL,
          Character.FORMAT,
          Character.UNASSIGNED,
          Character.PRIVATE_USE,
          Character.SURROGATE,
          Character.SPACE_SEPARATOR,
          Character.LINE_SEPARATOR,
          Character.PARAGRAPH_SEPARATOR ->
          false;
      default -> true;
    };
  }

  private static void hex(StringBuilder out, int b) {
    out.append("\\x").append(HEX.toHexDigits((byte) b));
  }
}
