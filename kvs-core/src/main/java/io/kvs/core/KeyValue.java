package io.kvs.core;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * A key and its value, as a scan returns them. Equality compares the bytes.
 *
 * @param key the key
 * @param value the value
 */
public record KeyValue(byte[] key, byte[] value) {
  /** Checks that neither part is null. */
  public KeyValue {
    if (key == null || value == null) {
      throw new NullPointerException("key and value must not be null");
    }
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof KeyValue that
        && Arrays.equals(key, that.key)
        && Arrays.equals(value, that.value);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(key) + Arrays.hashCode(value);
  }

  @Override
  public String toString() {
    return "KeyValue[key=" + HexFormat.of().formatHex(key) + ", value=" + value.length + " bytes]";
  }
}
