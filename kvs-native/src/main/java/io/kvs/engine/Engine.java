package io.kvs.engine;

import io.kvs.nativelib.NativeLibrary;
import io.kvs.nativelib.internal.NativeMethods;
import java.lang.ref.Cleaner;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One KVS volume and its regions. Open with {@link #open(Path, EngineOptions)}; close to sync and
 * release everything (a {@link Cleaner} closes a forgotten engine once neither it nor any of its
 * region handles is reachable, but do not rely on it). After {@link #close()} every call on the
 * engine, its regions and their iterators throws {@link io.kvs.core.ClosedException}. Thread-safe.
 */
public final class Engine implements AutoCloseable {
  private static final Cleaner CLEANER = Cleaner.create();

  private final HandleGuard guard = new HandleGuard("engine");
  private final long handle;
  private final Cleaner.Cleanable cleanable;

  /** Open region handles by name; held only to read or change the map. */
  private final Map<String, Region> regions = new HashMap<>();

  /** Orders the opening, creation, drop and reopening of each region (not of different ones). */
  private final NameLocks changing = new NameLocks();

  private Engine(long handle) {
    this.handle = handle;
    this.cleanable = CLEANER.register(this, new NativeCloser(handle, guard));
  }

  /**
   * Opens the volume at {@code path} (a file or block device), formatting a missing or empty file
   * when {@link EngineOptions#createIfMissing()}.
   *
   * @throws io.kvs.core.KvsException if the volume cannot be opened: NOT_FOUND for a file that is
   *     no KVS volume, CORRUPTION for damaged metadata, IO_ERROR from the operating system
   */
  public static Engine open(Path path, EngineOptions options) {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(options, "options");
    NativeLibrary.load();
    long handle =
        NativeMethods.engineOpen(
            path.toAbsolutePath().toString(),
            options.sync(),
            options.flushIntervalMillis(),
            options.directIo(),
            options.l0SizeBytes(),
            options.growthFactor(),
            options.smallKvBytesMax(),
            options.mediumKvBytesMax(),
            options.memoryBudgetBytes(),
            options.createIfMissing());
    return new Engine(handle);
  }

  /**
   * Creates region {@code name} (1 to 255 UTF-8 bytes).
   *
   * @throws io.kvs.core.InvalidRequestException if the name is taken or invalid
   */
  public Region createRegion(String name) {
    return regionCall(name, true);
  }

  /**
   * Opens region {@code name}, recovering it from its logs on first open. Opening an open region
   * returns the same handle.
   *
   * @throws io.kvs.core.KvsException with status NOT_FOUND if there is no such region
   */
  public Region openRegion(String name) {
    return regionCall(name, false);
  }

  /** Drops region {@code name} and frees its space; its handle is closed first. */
  public void dropRegion(String name) {
    byte[] bytes = nameBytes(name);
    guard.enter();
    NameLocks.Held held = changing.lock(name);
    try {
      closeHandle(name);
      NativeMethods.regionDrop(handle, bytes);
    } finally {
      held.close();
      guard.exit();
    }
  }

  /**
   * Splits region {@code name} at {@code splitKey} into two new regions that share its data (no
   * copy): {@code lower} holds its keys below the split key, {@code upper} the rest. The region's
   * handle is closed first and the region is gone once this returns; a crash leaves either it or
   * both daughters. Nothing is merged first: the daughters take its in-memory level and share its
   * write-ahead log until each has merged its part. Open the daughters with {@link
   * #openRegion(String)}.
   *
   * @throws io.kvs.core.InvalidRequestException for a key outside the region (or at its lower
   *     bound), or a daughter name that is taken or invalid
   * @throws io.kvs.core.KvsException NOT_FOUND for no region {@code name}; the error that stopped
   *     the region, or its logs' (IO_ERROR for a full device), if they could not be ended (it stays
   *     whole, with a new handle on the next open)
   */
  public void splitRegion(String name, byte[] splitKey, String lower, String upper) {
    Objects.requireNonNull(splitKey, "splitKey");
    byte[] bytes = nameBytes(name);
    byte[] lowerBytes = nameBytes(lower);
    byte[] upperBytes = nameBytes(upper);
    guard.enter();
    NameLocks.Held held = changing.lockAll(List.of(name, lower, upper));
    try {
      closeHandle(name);
      NativeMethods.regionSplit(handle, bytes, splitKey, lowerBytes, upperBytes);
    } finally {
      held.close();
      guard.exit();
    }
  }

  /**
   * Closes region {@code name}'s handle, runs {@code change} (a native service of this library that
   * has the engine reopen the region, as promoting a replica does), then returns a new handle. The
   * old handle fails with {@link io.kvs.core.ClosedException} from the call on. Other regions are
   * opened, changed and used meanwhile.
   */
  public Region reopenRegion(String name, Runnable change) {
    guard.enter();
    NameLocks.Held held = changing.lock(name);
    try {
      closeHandle(name);
      change.run();
      return regionCall(name, false);
    } finally {
      held.close();
      guard.exit();
    }
  }

  private void closeHandle(String name) {
    Region open;
    synchronized (regions) {
      open = regions.remove(name);
    }
    if (open != null) {
      open.closeHandle();
    }
  }

  private Region regionCall(String name, boolean create) {
    byte[] bytes = nameBytes(name);
    guard.enter();
    NameLocks.Held held = changing.lock(name);
    try {
      if (!create) {
        synchronized (regions) {
          Region open = regions.get(name);
          if (open != null) {
            return open;
          }
        }
      }
      long region =
          create
              ? NativeMethods.regionCreate(handle, bytes)
              : NativeMethods.regionOpen(handle, bytes);
      Region wrapper = new Region(name, region, this, guard);
      synchronized (regions) {
        regions.put(name, wrapper);
      }
      return wrapper;
    } finally {
      held.close();
      guard.exit();
    }
  }

  /**
   * The native handle, for the services of this library (a region service tapping the engine's
   * regions); not for applications. The engine must outlive its users.
   *
   * @throws io.kvs.core.ClosedException if the engine is closed
   */
  public long nativeHandle() {
    guard.enter();
    try {
      return handle;
    } finally {
      guard.exit();
    }
  }

  /** The engine's counters: node cache and memory budget ({@link EngineStats}). */
  public EngineStats stats() {
    guard.enter();
    try {
      return EngineStats.of(NativeMethods.engineStats(handle));
    } finally {
      guard.exit();
    }
  }

  private static byte[] nameBytes(String name) {
    Objects.requireNonNull(name, "name");
    return name.getBytes(StandardCharsets.UTF_8);
  }

  /** Syncs every region and closes the volume; later calls on this engine or its regions fail. */
  @Override
  public void close() {
    synchronized (regions) {
      for (Region region : regions.values()) {
        region.closeHandle();
      }
      regions.clear();
    }
    cleanable.clean();
  }

  /**
   * Closes the native engine once, from {@link #close()} or from the cleaner when the engine (and
   * so every region handle, which keeps it reachable) is unreachable. It closes the guard first, so
   * no call can run on freed memory and none can succeed afterwards.
   */
  private static final class NativeCloser implements Runnable {
    private final long handle;
    private final HandleGuard guard;

    NativeCloser(long handle, HandleGuard guard) {
      this.handle = handle;
      this.guard = guard;
    }

    @Override
    public void run() {
      if (guard.close()) {
        NativeMethods.engineClose(handle);
      }
    }
  }
}
