package io.kvs.bench.elastic;

import java.nio.charset.StandardCharsets;

/**
 * The benchmark's keys, named by an int code so that the operation log keeps four bytes per key: a
 * code {@code i >= 0} is the i-th loaded key, {@code "k"} and 16 hex digits of a hash of {@code i}
 * (spread over the whole key space); a code {@code -1 - j} is the j-th of {@link #HOT_KEYS} hot
 * keys, {@code "k80"} and 14 hex digits, all in the narrow range [{@code k80}, {@code k81}) (1/256
 * of the key space, which loaded keys also fall into).
 */
final class LoadKeys {
  /** How many distinct keys the hot range's writes go to. */
  static final int HOT_KEYS = 4096;

  static final byte[] HOT_START = "k80".getBytes(StandardCharsets.US_ASCII);
  static final byte[] HOT_END = "k81".getBytes(StandardCharsets.US_ASCII);

  private LoadKeys() {}

  static int hotCode(int hot) {
    return -1 - hot;
  }

  /** The key {@code code} stands for. */
  static byte[] key(int code) {
    if (code >= 0) {
      return String.format("k%016x", mix(code)).getBytes(StandardCharsets.US_ASCII);
    }
    long hot = mix(-1L - code) >>> 8; // 14 hex digits
    return String.format("k80%014x", hot).getBytes(StandardCharsets.US_ASCII);
  }

  // SplitMix64's finaliser: consecutive codes land all over the key space.
  private static long mix(long value) {
    long z = value + 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
