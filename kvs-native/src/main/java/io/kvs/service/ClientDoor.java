package io.kvs.service;

import io.kvs.core.security.TlsOptions;
import io.kvs.nativelib.NativeLibrary;
import io.kvs.nativelib.internal.NativeMethods;
import java.util.Objects;
import java.util.Optional;

/**
 * The client port served natively (docs/ARCHITECTURE.md "Server threads"): shard threads, each
 * running its connections' requests to completion through a {@link RegionService}; requests never
 * enter the JVM. Protocol, handshake and bounds: docs/PROTOCOL.md, "Client TCP framing". With
 * {@link TlsOptions} every connection speaks TLS (OpenSSL, in native code), mutual TLS if they
 * require client certificates. Close it before the service. Thread-safe.
 */
public final class ClientDoor implements AutoCloseable {
  /**
   * Settings.
   *
   * @param shards shard threads (1..256)
   * @param maxConnections client connections open at once; one more is closed at once
   * @param maxInFlight requests per connection not yet answered before it stops being read
   * @param maxFrameBytes a larger frame closes its connection
   * @param clientSecret what clients must prove (16..1024 bytes), if present
   * @param handshakeTimeoutMillis how long a new connection has to complete its handshakes (TLS and
   *     the client handshake)
   * @param tls TLS of the port (PEM files read when the door starts), if present; plain TCP if not
   */
  public record Options(
      String host,
      int port,
      int shards,
      int maxConnections,
      int maxInFlight,
      int maxFrameBytes,
      Optional<byte[]> clientSecret,
      int handshakeTimeoutMillis,
      Optional<TlsOptions> tls) {
    public Options {
      Objects.requireNonNull(clientSecret, "clientSecret");
      Objects.requireNonNull(tls, "tls");
    }
  }

  /** What the door counted. */
  public record Stats(
      long requests,
      long connections,
      long refusedConnections,
      long refusals,
      long outputStalls,
      long malformed,
      long shardTurns,
      long shardWakeups) {}

  private long handle;
  private final int port;

  private ClientDoor(long handle) {
    this.handle = handle;
    this.port = NativeMethods.clientDoorPort(handle);
  }

  /**
   * Starts serving {@code service} on {@code options.host():options.port()}.
   *
   * @throws io.kvs.core.KvsException if it cannot listen there, an option is out of range, or a TLS
   *     file is missing or holds no PEM certificate or key (the message names the file)
   */
  public static ClientDoor start(RegionService service, Options options) {
    NativeLibrary.load();
    TlsOptions tls = options.tls().orElse(null);
    return new ClientDoor(
        NativeMethods.clientDoorStart(
            service.nativeHandle(),
            options.host(),
            options.port(),
            options.shards(),
            options.maxConnections(),
            options.maxInFlight(),
            options.maxFrameBytes(),
            options.clientSecret().orElse(null),
            options.handshakeTimeoutMillis(),
            tls == null ? null : tls.certificate().toString(),
            tls == null ? null : tls.privateKey().toString(),
            tls == null ? null : tls.trustedCa().toString(),
            tls != null && tls.requireClientAuth()));
  }

  /** The port it listens on. */
  public int port() {
    return port;
  }

  /** Its counters now. */
  public synchronized Stats stats() {
    if (handle == 0) {
      return new Stats(0, 0, 0, 0, 0, 0, 0, 0);
    }
    long[] s = NativeMethods.clientDoorStats(handle);
    return new Stats(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]);
  }

  /**
   * The watchdog's probe of the shards (one thread at a time; never blocks): whether each shard, in
   * index order, ran the probe of the previous call (true on the first); each that did is sent the
   * next. Empty once closed.
   */
  public synchronized boolean[] probe() {
    return handle == 0 ? new boolean[0] : NativeMethods.clientDoorProbe(handle);
  }

  /** Stops accepting, waits for the replies still to come, closes every connection; idempotent. */
  @Override
  public synchronized void close() {
    if (handle != 0) {
      NativeMethods.clientDoorStop(handle);
      handle = 0;
    }
  }
}
