package io.kvs.fabric;

import io.kvs.core.ClosedException;
import io.kvs.engine.Region;
import io.kvs.nativelib.NativeLibrary;
import io.kvs.nativelib.internal.NativeMethods;
import java.util.HashSet;
import java.util.Set;

/**
 * A server of the fabric transport: answers wire-protocol requests (docs/PROTOCOL.md) from the
 * engine regions attached to it, with a native spinning thread and workers; requests never enter
 * the JVM. Close it before the engine whose regions it serves. Thread-safe.
 */
public final class FabricServer implements AutoCloseable {
  private long handle;
  private final int port;
  private final Set<Long> attached = new HashSet<>();

  private FabricServer(long handle) {
    this.handle = handle;
    this.port = NativeMethods.fabricServerPort(handle);
  }

  /**
   * Starts a server listening for bootstrap connections on {@code options.host():options.port()}.
   *
   * @throws io.kvs.core.KvsException NOT_FOUND if libfabric or the provider is not available here
   */
  public static FabricServer start(FabricOptions options) {
    NativeLibrary.load();
    return new FabricServer(
        NativeMethods.fabricServerStart(
            options.provider(), options.node(), options.host(), options.port(), options.workers()));
  }

  /** The bootstrap port clients connect to. */
  public int port() {
    return port;
  }

  /** Serves {@code region} as {@code regionId} at {@code epoch} (replacing an earlier one). */
  public synchronized void attach(long regionId, long epoch, Region region) {
    NativeMethods.fabricServerAttach(live(), regionId, epoch, region.nativeHandle());
    attached.add(regionId);
  }

  /** Stops serving {@code regionId}; its requests get WRONG_REGION from now on. */
  public synchronized void detach(long regionId) {
    NativeMethods.fabricServerDetach(live(), regionId);
    attached.remove(regionId);
  }

  /** Disconnects every client and stops; idempotent. */
  @Override
  public synchronized void close() {
    if (handle != 0) {
      NativeMethods.fabricServerStop(handle);
      handle = 0;
      attached.clear();
    }
  }

  private long live() {
    if (handle == 0) {
      throw new ClosedException("fabric server is closed");
    }
    return handle;
  }
}
