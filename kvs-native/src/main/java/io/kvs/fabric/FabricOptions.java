package io.kvs.fabric;

import io.kvs.core.security.ClusterSecret;
import java.util.Objects;
import java.util.Optional;

/**
 * Settings of the fabric transport (docs/PROTOCOL.md, "Fabric messages").
 *
 * @param provider the transport: a libfabric provider, {@code shm} (processes on one host), {@code
 *     tcp} (any network) or {@code verbs} (RDMA NICs); or {@code stream}, the channel's own
 *     transport over plain TCP (any network, no libfabric: docs/PROTOCOL.md, "Stream frames")
 * @param node for {@code tcp} and {@code verbs}: the local address to bind, or empty for any
 * @param host server: the bootstrap listen address
 * @param port server: the bootstrap port, 0 for any free one
 * @param workers server: worker threads
 * @param bufferBytes client: size of each of its two buffers (multiple of 64, 4 KiB to 64 MiB)
 * @param timeoutMillis client: a request without a reply fails after this, and the connection
 *     closes
 * @param secret the cluster secret: a server admits as peers (primaries replicating to it) only
 *     connections that prove it in the bootstrap, and its replication connections prove it to
 *     backups (docs/PROTOCOL.md, "Fabric bootstrap"). Clients ignore it. Empty: peers are not
 *     authenticated (replication is still guarded by each region's stream key)
 * @param clientSecret the client secret: a server admits as clients only connections that prove it;
 *     a client proves it and connects only to servers that prove it back. It never lets a
 *     connection replicate. Empty: clients are not authenticated
 */
public record FabricOptions(
    String provider,
    String node,
    String host,
    int port,
    int workers,
    int bufferBytes,
    int timeoutMillis,
    Optional<ClusterSecret> secret,
    Optional<ClusterSecret> clientSecret) {
  /** Checks the values. */
  public FabricOptions {
    Objects.requireNonNull(provider, "provider");
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(secret, "secret");
    Objects.requireNonNull(clientSecret, "clientSecret");
    if (!provider.equals("shm")
        && !provider.equals("tcp")
        && !provider.equals("verbs")
        && !provider.equals("stream")) {
      throw new IllegalArgumentException("provider must be shm, tcp, verbs or stream: " + provider);
    }
    if (port < 0 || port > 65535 || workers < 1 || workers > 256) {
      throw new IllegalArgumentException("port 0..65535 and workers 1..256 expected");
    }
    if (bufferBytes < 4096 || bufferBytes > (64 << 20) || bufferBytes % 64 != 0) {
      throw new IllegalArgumentException("bufferBytes: a multiple of 64 in 4 KiB..64 MiB");
    }
    if (timeoutMillis < 1) {
      throw new IllegalArgumentException("timeoutMillis must be positive");
    }
  }

  /** Options without secrets. */
  public FabricOptions(
      String provider,
      String node,
      String host,
      int port,
      int workers,
      int bufferBytes,
      int timeoutMillis) {
    this(
        provider,
        node,
        host,
        port,
        workers,
        bufferBytes,
        timeoutMillis,
        Optional.empty(),
        Optional.empty());
  }

  /** These options with the cluster secret {@code newSecret} (empty: none). */
  public FabricOptions withSecret(Optional<ClusterSecret> newSecret) {
    return new FabricOptions(
        provider, node, host, port, workers, bufferBytes, timeoutMillis, newSecret, clientSecret);
  }

  /** These options with the client secret {@code newSecret} (empty: none). */
  public FabricOptions withClientSecret(Optional<ClusterSecret> newSecret) {
    return new FabricOptions(
        provider, node, host, port, workers, bufferBytes, timeoutMillis, secret, newSecret);
  }

  /** The cluster secret's bytes for the native side, or null. */
  byte[] secretBytes() {
    return secret.map(ClusterSecret::bytes).orElse(null);
  }

  /** The client secret's bytes for the native side, or null. */
  byte[] clientSecretBytes() {
    return clientSecret.map(ClusterSecret::bytes).orElse(null);
  }

  /** The defaults for {@code provider}: loopback, 2 workers, 256 KiB buffers, 5 s. */
  public static FabricOptions defaults(String provider) {
    return new FabricOptions(
        provider, provider.equals("shm") ? "" : "127.0.0.1", "127.0.0.1", 0, 2, 256 << 10, 5000);
  }

  /** These options with another bootstrap port. */
  public FabricOptions withPort(int newPort) {
    return new FabricOptions(
        provider, node, host, newPort, workers, bufferBytes, timeoutMillis, secret, clientSecret);
  }

  /**
   * These options on another address: the bootstrap listens there, and a {@code tcp} or {@code
   * verbs} endpoint binds it too.
   */
  public FabricOptions withHost(String newHost) {
    String newNode = provider.equals("shm") ? node : newHost;
    return new FabricOptions(
        provider,
        newNode,
        newHost,
        port,
        workers,
        bufferBytes,
        timeoutMillis,
        secret,
        clientSecret);
  }

  /** These options with another request timeout. */
  public FabricOptions withTimeoutMillis(int millis) {
    return new FabricOptions(
        provider, node, host, port, workers, bufferBytes, millis, secret, clientSecret);
  }
}
