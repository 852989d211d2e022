package io.kvs.engine;

import io.kvs.core.ClosedException;
import io.kvs.core.KeyValue;
import io.kvs.nativelib.internal.NativeMethods;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * An ordered scan over a snapshot of a region's live keys. Obtain one from {@link
 * Region#newIterator(byte[])}, position it with {@link #seek(byte[])} or {@link #seekToFirst()},
 * and close it promptly: while it is open the storage it reads cannot be reused. Not thread-safe.
 *
 * <pre>{@code
 * try (RegionIterator it = region.newIterator(null)) {
 *   for (it.seek(from); it.isValid(); it.next()) {
 *     use(it.key(), it.value());
 *   }
 * }
 * }</pre>
 */
public final class RegionIterator implements AutoCloseable {
  private final Region region;
  private long handle;
  private boolean valid;

  RegionIterator(Region region, long handle) {
    this.region = region;
    this.handle = handle;
  }

  /** Positions at the first key. */
  public void seekToFirst() {
    region.enter();
    try {
      valid = NativeMethods.iteratorSeek(live(), null);
    } finally {
      region.exit();
    }
  }

  /** Positions at the first key at or after {@code key}. */
  public void seek(byte[] key) {
    byte[] copy = key.clone();
    region.enter();
    try {
      valid = NativeMethods.iteratorSeek(live(), copy);
    } finally {
      region.exit();
    }
  }

  /** Whether the iterator is at a key (false at the end). */
  public boolean isValid() {
    return valid;
  }

  /** Moves to the next key. Requires {@link #isValid()}. */
  public void next() {
    requireValid();
    region.enter();
    try {
      valid = NativeMethods.iteratorNext(live());
    } finally {
      region.exit();
    }
  }

  /** The current key. Requires {@link #isValid()}. */
  public byte[] key() {
    requireValid();
    region.enter();
    try {
      return NativeMethods.iteratorKey(live());
    } finally {
      region.exit();
    }
  }

  /** The current value. Requires {@link #isValid()}. */
  public byte[] value() {
    requireValid();
    region.enter();
    try {
      return NativeMethods.iteratorValue(live());
    } finally {
      region.exit();
    }
  }

  /**
   * Returns the pairs from the current position on, in key order, and moves past them: at most
   * {@code limit} pairs, stopping once their keys and values reach {@code maxBytes} (at least one
   * pair while the iterator is valid; an empty list at the end). The values stored behind log
   * pointers are read as one batch of concurrent device reads, so this is the fast way to scan: a
   * batch costs about one device latency, where {@link #value()} pays one per value.
   *
   * @throws IllegalArgumentException if {@code limit} or {@code maxBytes} is not positive
   */
  public List<KeyValue> nextPairs(int limit, int maxBytes) {
    if (limit <= 0 || maxBytes <= 0) {
      throw new IllegalArgumentException(
          "limit and maxBytes must be positive: " + limit + ", " + maxBytes);
    }
    byte[] packed;
    region.enter();
    try {
      long live = live();
      if (!valid) {
        return List.of();
      }
      packed = NativeMethods.iteratorReadPairs(live, limit, maxBytes);
    } finally {
      region.exit();
    }
    ByteBuffer in = ByteBuffer.wrap(packed).order(ByteOrder.LITTLE_ENDIAN);
    valid = in.get() != 0;
    List<KeyValue> pairs = new ArrayList<>();
    while (in.hasRemaining()) {
      byte[] key = new byte[in.getInt()];
      byte[] value = new byte[in.getInt()];
      in.get(key).get(value);
      pairs.add(new KeyValue(key, value));
    }
    return pairs;
  }

  /** Releases the snapshot; idempotent. */
  @Override
  public void close() {
    region.closeIterator(this);
  }

  /** Called by the region (under its lock) to free the native iterator. */
  void destroy() {
    if (handle != 0) {
      NativeMethods.iteratorDestroy(handle);
      handle = 0;
      valid = false;
    }
  }

  private long live() {
    if (handle == 0) {
      throw new ClosedException("iterator is closed");
    }
    return handle;
  }

  private void requireValid() {
    if (!valid) {
      throw new IllegalStateException("iterator is not positioned at a key");
    }
  }
}
