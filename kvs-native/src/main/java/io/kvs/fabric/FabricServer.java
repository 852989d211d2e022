package io.kvs.fabric;

import io.kvs.nativelib.NativeLibrary;
import io.kvs.nativelib.internal.NativeMethods;
import io.kvs.service.RegionService;

/**
 * A server of the fabric transport: answers wire-protocol requests (docs/PROTOCOL.md) through a
 * {@link RegionService}, with a native spinning thread and workers; requests never enter the JVM.
 * Close it before the service and the engine. Thread-safe.
 */
public final class FabricServer implements AutoCloseable {
  private long handle;
  private final int port;

  private FabricServer(long handle) {
    this.handle = handle;
    this.port = NativeMethods.fabricServerPort(handle);
  }

  /**
   * Starts a server listening for bootstrap connections on {@code options.host():options.port()}.
   *
   * @throws io.kvs.core.KvsException NOT_FOUND if libfabric or the provider is not available here
   */
  public static FabricServer start(FabricOptions options, RegionService service) {
    NativeLibrary.load();
    return new FabricServer(
        NativeMethods.fabricServerStart(
            service.nativeHandle(),
            options.provider(),
            options.node(),
            options.host(),
            options.port(),
            options.workers(),
            options.secretBytes(),
            options.clientSecretBytes()));
  }

  /** The bootstrap port clients connect to. */
  public int port() {
    return port;
  }

  /**
   * The watchdog's probe (one caller at a time; never blocks): whether the thread that reads this
   * server's connections -- the stream transport's loop ({@code kvs-stream}) or the fabric's
   * spinning thread ({@code kvs-fab-spin}) -- came round since the previous call (true on the
   * first, and once closed); if it did, it is woken to come round again.
   */
  public synchronized boolean probe() {
    return handle == 0 || NativeMethods.fabricServerProbe(handle);
  }

  /** Disconnects every client and stops; idempotent. */
  @Override
  public synchronized void close() {
    if (handle != 0) {
      NativeMethods.fabricServerStop(handle);
      handle = 0;
    }
  }
}
