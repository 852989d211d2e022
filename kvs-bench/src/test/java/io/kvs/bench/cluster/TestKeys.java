package io.kvs.bench.cluster;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** Keys spread over every region (two hashed leading bytes) and values of assorted sizes. */
final class TestKeys {
  private TestKeys() {}

  /** Key {@code i} of the set named {@code prefix}. */
  static byte[] key(String prefix, int i) {
    int spread = (int) ((i * 2654435761L + prefix.hashCode()) >>> 16);
    byte[] name = (prefix + "-" + i).getBytes(StandardCharsets.UTF_8);
    byte[] key = new byte[2 + name.length];
    key[0] = (byte) (spread >>> 8);
    key[1] = (byte) spread;
    System.arraycopy(name, 0, key, 2, name.length);
    return key;
  }

  /** Value of key {@code i} written in round {@code round}: 10 bytes to about 4 KiB. */
  static byte[] value(String prefix, int i, int round) {
    byte[] text = (prefix + " " + i + " round " + round + " ").getBytes(StandardCharsets.UTF_8);
    int length = text.length + (i * 131 + round * 17) % 4000;
    byte[] value = Arrays.copyOf(text, length);
    for (int j = text.length; j < length; j++) {
      value[j] = (byte) (j * 31 + i);
    }
    return value;
  }
}
