package io.kvs.bench.chaos;

import io.kvs.bench.history.Bytes;
import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The keys the recorded load works on, spread over every region of a uniformly split key space (the
 * first byte of key i is i * 256 / count), in key order, with the region each lies in (regions
 * never split, so that stays true for the whole run).
 */
final class KeySpace {
  private final byte[][] keys;
  private final long[] regionOf;
  private final Map<Bytes, Integer> indexOf = new HashMap<>();

  KeySpace(int count, RegionMap map) {
    byte[][] made = new byte[count][];
    for (int i = 0; i < count; i++) {
      byte[] suffix = ("chaos-" + i).getBytes(StandardCharsets.UTF_8);
      byte[] key = new byte[suffix.length + 1];
      key[0] = (byte) (i * 256 / count);
      System.arraycopy(suffix, 0, key, 1, suffix.length);
      made[i] = key;
    }
    Arrays.sort(made, Keys::compare);
    keys = made;
    regionOf = new long[count];
    for (int i = 0; i < count; i++) {
      byte[] key = keys[i];
      regionOf[i] =
          map.regionFor(key)
              .map(RegionDescriptor::id)
              .orElseThrow(() -> new IllegalStateException("no region holds " + Keys.print(key)));
      indexOf.put(Bytes.of(key), i);
    }
  }

  int size() {
    return keys.length;
  }

  /** Key {@code i} in key order. */
  byte[] key(int i) {
    return keys[i];
  }

  /** The region of key {@code i}. */
  long regionOf(int i) {
    return regionOf[i];
  }

  /** The index of {@code key}, or -1 if it is none of ours. */
  int indexOf(Bytes key) {
    return indexOf.getOrDefault(key, -1);
  }
}
