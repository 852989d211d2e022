package io.kvs.engine;

import io.kvs.core.InvalidRequestException;
import io.kvs.core.KeyValue;
import io.kvs.core.StatusCode;
import io.kvs.nativelib.internal.NativeMethods;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A handle on one region of an {@link Engine}. Closing the handle (or the engine) makes later calls
 * fail with {@link io.kvs.core.ClosedException}; the region itself stays on the volume. A handle
 * keeps its engine open while it is reachable, so a program may keep only the region. Thread-safe.
 */
public final class Region implements AutoCloseable {
  /** The largest key, in bytes. */
  public static final int MAX_KEY_BYTES = 4096;

  /** The largest value, in bytes. */
  public static final int MAX_VALUE_BYTES = 1 << 20;

  /** Keys and values {@link #scan} reads per native call. */
  private static final int SCAN_BATCH_BYTES = 4 << 20;

  private final String name;
  private final long handle;
  // Held so that the engine stays reachable while this handle is: its
  // cleaner frees the native engine only once nothing can call into it.
  private final Engine engine;
  private final HandleGuard engineGuard;
  private final HandleGuard guard;
  private final Set<RegionIterator> iterators = new HashSet<>();

  Region(String name, long handle, Engine engine, HandleGuard engineGuard) {
    this.name = name;
    this.handle = handle;
    this.engine = engine;
    this.engineGuard = engineGuard;
    this.guard = new HandleGuard("region '" + name + "'");
  }

  public String name() {
    return name;
  }

  /** The engine this region belongs to. */
  public Engine engine() {
    return engine;
  }

  /** Writes {@code value} under {@code key}, replacing any previous value. */
  public void put(byte[] key, byte[] value) {
    checkKey(key.length);
    checkValue(value.length);
    enter();
    try {
      NativeMethods.put(handle, key, 0, key.length, value, 0, value.length);
    } finally {
      exit();
    }
  }

  /**
   * Writes the value between {@code value}'s position and limit under the key between {@code key}'s
   * position and limit. Direct buffers are read in place; positions are not changed.
   */
  public void put(ByteBuffer key, ByteBuffer value) {
    checkKey(key.remaining());
    checkValue(value.remaining());
    if (!key.isDirect() || !value.isDirect()) {
      put(bytes(key), bytes(value));
      return;
    }
    enter();
    try {
      NativeMethods.putDirect(
          handle, key, key.position(), key.remaining(), value, value.position(), value.remaining());
    } finally {
      exit();
    }
  }

  /** The value of {@code key}, or null if it has none. */
  public byte[] get(byte[] key) {
    checkKey(key.length);
    enter();
    try {
      return NativeMethods.get(handle, key, 0, key.length);
    } finally {
      exit();
    }
  }

  /**
   * Reads the value of the key between {@code key}'s position and limit into {@code value} at its
   * position. Returns the value's size, or -1 if the key has none. If the value fits the remaining
   * space it is copied and {@code value}'s position advances past it; otherwise nothing is copied
   * and the caller may retry with a buffer of the returned size.
   */
  public int get(ByteBuffer key, ByteBuffer value) {
    checkKey(key.remaining());
    if (!key.isDirect() || !value.isDirect()) {
      byte[] found = get(bytes(key));
      if (found == null) {
        return -1;
      }
      if (found.length <= value.remaining()) {
        value.put(found);
      }
      return found.length;
    }
    enter();
    try {
      int size =
          NativeMethods.getDirect(
              handle,
              key,
              key.position(),
              key.remaining(),
              value,
              value.position(),
              value.remaining());
      if (size >= 0 && size <= value.remaining()) {
        value.position(value.position() + size);
      }
      return size;
    } finally {
      exit();
    }
  }

  /** Deletes {@code key}; deleting an absent key is not an error. */
  public void delete(byte[] key) {
    checkKey(key.length);
    enter();
    try {
      NativeMethods.delete(handle, key, 0, key.length);
    } finally {
      exit();
    }
  }

  /** Deletes the key between {@code key}'s position and limit. */
  public void delete(ByteBuffer key) {
    delete(bytes(key));
  }

  /** Returns once every write acknowledged so far is durable. */
  public void sync() {
    enter();
    try {
      NativeMethods.regionSync(handle);
    } finally {
      exit();
    }
  }

  /**
   * Merges the writes made so far into the region's levels while it keeps serving (writes go on
   * into a new L0): what a primary does before it hands its leadership over, so that the new
   * primary replays few log records. Nothing changes what the region holds.
   *
   * @param waitMillis how long to wait at most (the merge goes on after it)
   * @return whether every write before the call was merged in time
   */
  public boolean mergeAhead(long waitMillis) {
    if (waitMillis < 0) {
      throw new IllegalArgumentException("negative wait: " + waitMillis);
    }
    enter();
    try {
      return NativeMethods.regionMergeAhead(handle, waitMillis);
    } finally {
      exit();
    }
  }

  /**
   * Where the region splits by size, without a scan of its levels: a key of its largest level below
   * which about half of the region's bytes lie (each level's share read from its index).
   *
   * @return the key, or empty if the index cannot say (L0 holds more than the levels, or they hold
   *     no key inside the region's bounds)
   */
  public Optional<byte[]> splitKey() {
    enter();
    try {
      return Optional.ofNullable(NativeMethods.regionSplitKey(handle));
    } finally {
      exit();
    }
  }

  /**
   * Where the region splits by load: the median of the keys its recent requests named (one put,
   * delete or get in 16; the last 1,024 kept) that its bounds can split at.
   *
   * @return the key, or empty with fewer than 64 such keys sampled
   */
  public Optional<byte[]> loadSplitKey() {
    enter();
    try {
      return Optional.ofNullable(NativeMethods.regionLoadSplitKey(handle));
    } finally {
      exit();
    }
  }

  /**
   * Opens an iterator over a snapshot of the region's live keys, below {@code upperBound}
   * (exclusive) if it is not null. Iterators are closed with their region or engine at the latest.
   */
  public RegionIterator newIterator(byte[] upperBound) {
    enter();
    try {
      synchronized (iterators) {
        RegionIterator iterator =
            new RegionIterator(
                this,
                NativeMethods.iteratorCreate(
                    handle, upperBound == null ? null : upperBound.clone()));
        iterators.add(iterator);
        return iterator;
      }
    } finally {
      exit();
    }
  }

  /**
   * Returns up to {@code limit} live pairs with keys at or after {@code from} (null: the first key)
   * and before {@code to} (exclusive; null: no bound), in key order, read from one snapshot. Values
   * behind log pointers are read as one batch of concurrent device reads. To page through a large
   * range, keep a {@link #newIterator(byte[]) RegionIterator} and call {@link
   * RegionIterator#nextPairs(int, int)}.
   *
   * @throws IllegalArgumentException if {@code limit} is not positive
   */
  public List<KeyValue> scan(byte[] from, byte[] to, int limit) {
    if (limit <= 0) {
      throw new IllegalArgumentException("limit must be positive: " + limit);
    }
    try (RegionIterator iterator = newIterator(to)) {
      if (from == null) {
        iterator.seekToFirst();
      } else {
        iterator.seek(from);
      }
      List<KeyValue> pairs = new ArrayList<>();
      while (pairs.size() < limit && iterator.isValid()) {
        pairs.addAll(iterator.nextPairs(limit - pairs.size(), SCAN_BATCH_BYTES));
      }
      return pairs;
    }
  }

  void closeIterator(RegionIterator iterator) {
    synchronized (iterators) {
      if (iterators.remove(iterator)) {
        iterator.destroy();
      }
    }
  }

  /**
   * The native region handle, for the transports of this library (the fabric server serves regions
   * by it); not for applications. The native region lives until it is dropped or its engine closed,
   * whatever happens to this handle object.
   *
   * @throws io.kvs.core.ClosedException if this handle is closed
   */
  public long nativeHandle() {
    enter();
    try {
      return handle;
    } finally {
      exit();
    }
  }

  /** The region's counters. */
  public RegionStats stats() {
    long[] values = new long[RegionStats.FIELDS];
    enter();
    try {
      NativeMethods.regionStats(handle, values);
    } finally {
      exit();
    }
    return RegionStats.of(values);
  }

  /**
   * Why the region stopped, if it did: a compaction failed (not for want of space: that heals when
   * space returns), and from then on its writes are refused with that error, for good. Its server
   * hands it over: it no longer lists it, so the master moves it to another replica.
   */
  public Optional<String> stoppedBy() {
    enter();
    try {
      return Optional.ofNullable(NativeMethods.regionStoppedBy(handle));
    } finally {
      exit();
    }
  }

  /**
   * A digest of what the region serves now, its in-memory and device levels (read from a snapshot,
   * while it serves): for comparing replicas of a region.
   */
  public ContentsDigest contentsDigest() {
    enter();
    try {
      return ContentsDigest.of(NativeMethods.regionContentsDigest(handle));
    } finally {
      exit();
    }
  }

  /** Closes this handle and its iterators; the region's data stays. */
  @Override
  public void close() {
    closeHandle();
  }

  void closeHandle() {
    guard.close();
    synchronized (iterators) {
      for (RegionIterator iterator : iterators) {
        iterator.destroy();
      }
      iterators.clear();
    }
  }

  void enter() {
    guard.enter();
    try {
      engineGuard.enter();
    } catch (RuntimeException e) {
      guard.exit();
      throw e;
    }
  }

  void exit() {
    engineGuard.exit();
    guard.exit();
  }

  private static byte[] bytes(ByteBuffer buffer) {
    byte[] copy = new byte[buffer.remaining()];
    buffer.duplicate().get(copy);
    return copy;
  }

  private static void checkKey(int size) {
    if (size == 0) {
      throw new InvalidRequestException(StatusCode.INVALID_ARGUMENT, "empty key");
    }
    if (size > MAX_KEY_BYTES) {
      throw new InvalidRequestException(
          StatusCode.TOO_LARGE, "key of " + size + " bytes exceeds the limit of " + MAX_KEY_BYTES);
    }
  }

  private static void checkValue(int size) {
    if (size > MAX_VALUE_BYTES) {
      throw new InvalidRequestException(
          StatusCode.TOO_LARGE,
          "value of " + size + " bytes exceeds the limit of " + MAX_VALUE_BYTES);
    }
  }

  @Override
  public String toString() {
    return "Region[" + Objects.toString(name) + "]";
  }
}
