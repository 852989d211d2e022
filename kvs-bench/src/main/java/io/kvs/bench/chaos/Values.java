package io.kvs.bench.chaos;

import io.kvs.bench.history.Bytes;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.SplittableRandom;

/**
 * The values the load writes: a token unique to the write ({@code c<client>w<sequence>l<padding>})
 * then {@code '|'} and a padding derived from the token, 0 to 4 KiB long, so that values are of
 * every size class (small, medium, large) and data reaches the device levels, while the history
 * holds only the tokens. A value read back is checked whole: one whose padding is not the token's
 * is recorded as a value nobody wrote, which the checker reports.
 */
final class Values {
  private static final int PADDING_MAX = 4096;

  private Values() {}

  /** The token of client {@code client}'s write number {@code sequence}, with a padding length. */
  static String token(int client, long sequence, SplittableRandom random) {
    int size = random.nextInt(10);
    int padding =
        size < 4
            ? random.nextInt(64)
            : size < 7 ? 64 + random.nextInt(900) : 964 + random.nextInt(PADDING_MAX - 963);
    return "c" + client + "w" + sequence + "l" + padding;
  }

  /** The whole value of {@code token}. */
  static byte[] value(String token) {
    byte[] head = (token + "|").getBytes(StandardCharsets.US_ASCII);
    int padding = Integer.parseInt(token.substring(token.lastIndexOf('l') + 1));
    byte[] value = Arrays.copyOf(head, head.length + padding);
    fillPadding(token, value, head.length);
    return value;
  }

  /**
   * What the history records for a value read back: its token if the value is whole, else a marker
   * no write ever had (with the value's length and first bytes, for the report).
   */
  static byte[] recorded(byte[] value) {
    int bar = -1;
    for (int i = 0; i < Math.min(value.length, 48); i++) {
      if (value[i] == '|') {
        bar = i;
        break;
      }
    }
    if (bar > 0) {
      String token = new String(value, 0, bar, StandardCharsets.US_ASCII);
      if (token.matches("c\\d+w\\d+l\\d+") && Arrays.equals(value(token), value)) {
        return token.getBytes(StandardCharsets.US_ASCII);
      }
    }
    byte[] head = Arrays.copyOf(value, Math.min(value.length, 32));
    return ("not written by anyone: "
            + value.length
            + " bytes starting "
            + Base64.getEncoder().encodeToString(head))
        .getBytes(StandardCharsets.US_ASCII);
  }

  /** The token of a recorded PUT value, as printed. */
  static String describe(Bytes recorded) {
    return new String(recorded.toArray(), StandardCharsets.US_ASCII);
  }

  private static void fillPadding(String token, byte[] value, int from) {
    long state = token.hashCode() * 0x9E3779B97F4A7C15L;
    for (int i = from; i < value.length; i++) {
      state ^= state << 13;
      state ^= state >>> 7;
      state ^= state << 17;
      value[i] = (byte) ('a' + Math.floorMod(state, 26));
    }
  }
}
