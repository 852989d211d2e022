package io.kvs.server.tcp;

import io.kvs.core.wire.WireCodec;
import java.time.Duration;

/**
 * Settings of a server's client port ({@link NativeClientPort}); {@link #defaults()} for a
 * one-machine server. Immutable; the constructor checks every bound.
 *
 * @param host the address it listens on
 * @param port its port, 0..65535 (0: any free port)
 * @param shards the native door's shard threads, 1..256 (default: one per core)
 * @param maxInFlightPerConnection requests of one connection not yet answered before it stops being
 *     read, at least 1 (default 256); it is read again below half
 * @param maxFrameBytes a larger frame closes its connection, at least {@link #MIN_FRAME_BYTES}
 *     (default: the largest message the protocol allows, {@link WireCodec#MESSAGE_BYTES_MAX})
 * @param maxConnections client connections open at once at most, at least 1 (default {@link
 *     #DEFAULT_MAX_CONNECTIONS}): one beyond is closed as soon as it is accepted
 */
public record ClientPortOptions(
    String host,
    int port,
    int shards,
    int maxInFlightPerConnection,
    int maxFrameBytes,
    int maxConnections) {
  /**
   * The default bound on client connections: clients keep one connection per server, so this is
   * room for a thousand client processes, and with 256 requests in flight on each, replies waiting
   * in the service stay below 256 Ki.
   */
  public static final int DEFAULT_MAX_CONNECTIONS = 1024;

  /** The smallest frame bound: room for the handshake's Hello and any small request. */
  public static final int MIN_FRAME_BYTES = 1024;

  /** How long a new connection has to complete its handshakes (TLS and the client handshake). */
  public static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);

  public ClientPortOptions {
    if (host == null || host.isEmpty()) {
      throw new IllegalArgumentException("host must be given");
    }
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port must be 0..65535: " + port);
    }
    if (shards < 1 || shards > 256) {
      throw new IllegalArgumentException("shards must be 1..256: " + shards);
    }
    if (maxInFlightPerConnection < 1) {
      throw new IllegalArgumentException(
          "maxInFlightPerConnection must be at least 1: " + maxInFlightPerConnection);
    }
    if (maxFrameBytes < MIN_FRAME_BYTES) {
      throw new IllegalArgumentException(
          "maxFrameBytes must be at least " + MIN_FRAME_BYTES + ": " + maxFrameBytes);
    }
    if (maxConnections < 1) {
      throw new IllegalArgumentException("maxConnections must be at least 1: " + maxConnections);
    }
  }

  /** Options with at most {@link #DEFAULT_MAX_CONNECTIONS} connections. */
  public ClientPortOptions(
      String host, int port, int shards, int maxInFlightPerConnection, int maxFrameBytes) {
    this(host, port, shards, maxInFlightPerConnection, maxFrameBytes, DEFAULT_MAX_CONNECTIONS);
  }

  /**
   * Loopback, any port, one shard per core (at most 256), 256 requests in flight per connection,
   * frames up to the protocol's largest message, {@link #DEFAULT_MAX_CONNECTIONS} connections.
   */
  public static ClientPortOptions defaults() {
    return new ClientPortOptions(
        "127.0.0.1",
        0,
        Math.min(256, Runtime.getRuntime().availableProcessors()),
        256,
        WireCodec.MESSAGE_BYTES_MAX);
  }

  /** These options with another port. */
  public ClientPortOptions withPort(int newPort) {
    return new ClientPortOptions(
        host, newPort, shards, maxInFlightPerConnection, maxFrameBytes, maxConnections);
  }

  /** These options listening on another address. */
  public ClientPortOptions withHost(String newHost) {
    return new ClientPortOptions(
        newHost, port, shards, maxInFlightPerConnection, maxFrameBytes, maxConnections);
  }

  /** These options with {@code count} shard threads (1..256). */
  public ClientPortOptions withShards(int count) {
    return new ClientPortOptions(
        host, port, count, maxInFlightPerConnection, maxFrameBytes, maxConnections);
  }

  /** These options with at most {@code connections} client connections (at least 1). */
  public ClientPortOptions withMaxConnections(int connections) {
    return new ClientPortOptions(
        host, port, shards, maxInFlightPerConnection, maxFrameBytes, connections);
  }
}
