package io.kvs.engine;

import io.kvs.core.ClosedException;
import io.kvs.nativelib.internal.NativeMethods;

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
