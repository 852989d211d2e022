package io.kvs.tools.demo;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * The demo's keys and values, both computed from numbers so that any value read can be checked.
 *
 * <p>Key {@code i}: two bytes spread by a hash (regions split the key space on the first two bytes,
 * so keys land evenly on them), then {@code user<i>}. Value of key {@code i} at version {@code v}:
 * {@code key <i> version <v> } followed by letters drawn from a generator seeded with both, 100 to
 * 1,000 bytes in all.
 */
final class DemoData {
  static final int MIN_VALUE_BYTES = 100;
  static final int MAX_VALUE_BYTES = 1000;

  private static final byte[] USER = "user".getBytes(StandardCharsets.US_ASCII);

  private DemoData() {}

  /** Key number {@code i}. */
  static byte[] key(int i) {
    int spread = (int) ((i * 2654435761L) >>> 16);
    byte[] number = Integer.toString(i).getBytes(StandardCharsets.US_ASCII);
    byte[] key = new byte[2 + USER.length + number.length];
    key[0] = (byte) (spread >>> 8);
    key[1] = (byte) spread;
    System.arraycopy(USER, 0, key, 2, USER.length);
    System.arraycopy(number, 0, key, 2 + USER.length, number.length);
    return key;
  }

  /** The number of a key made by {@link #key}, or -1 if it is not one. */
  static int keyNumber(byte[] key) {
    if (key.length <= 2 + USER.length
        || !Arrays.equals(key, 2, 2 + USER.length, USER, 0, USER.length)) {
      return -1;
    }
    try {
      int i =
          Integer.parseInt(
              new String(
                  key, 2 + USER.length, key.length - 2 - USER.length, StandardCharsets.US_ASCII));
      return Arrays.equals(key(i), key) ? i : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** The value key {@code i} holds after its {@code version}th write (version 0: the load). */
  static byte[] value(int i, int version) {
    byte[] header = ("key " + i + " version " + version + " ").getBytes(StandardCharsets.US_ASCII);
    SplittableRandom random = new SplittableRandom(((long) i << 32) ^ version);
    int length = random.nextInt(MIN_VALUE_BYTES, MAX_VALUE_BYTES + 1);
    byte[] value = Arrays.copyOf(header, Math.max(length, header.length));
    for (int j = header.length; j < value.length; j++) {
      value[j] = (byte) ('a' + random.nextInt(26));
    }
    return value;
  }

  /**
   * The version of key {@code i} that {@code value} is, or -1 if it is no version of that key (a
   * value of another key, or damaged).
   */
  static int versionOf(int i, byte[] value) {
    String prefix = "key " + i + " version ";
    byte[] expected = prefix.getBytes(StandardCharsets.US_ASCII);
    if (value.length < expected.length
        || !Arrays.equals(value, 0, expected.length, expected, 0, expected.length)) {
      return -1;
    }
    int end = expected.length;
    while (end < value.length && value[end] != ' ') {
      end++;
    }
    try {
      int version =
          Integer.parseInt(
              new String(value, expected.length, end - expected.length, StandardCharsets.US_ASCII));
      return Arrays.equals(value, value(i, version)) ? version : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
