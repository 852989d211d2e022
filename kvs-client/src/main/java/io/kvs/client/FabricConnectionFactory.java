package io.kvs.client;

import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.security.ClusterSecret;
import io.kvs.fabric.FabricClient;
import io.kvs.fabric.FabricOptions;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Fabric transport connections ({@code kvs-native}'s {@link FabricClient}). Loaded by name from
 * {@link ConnectionFactory#create} only when the fabric transport is chosen: the only classes of
 * the client, with {@link FabricConnection}, that refer to the optional kvs-native dependency.
 */
final class FabricConnectionFactory implements ConnectionFactory {
  /**
   * Each of a connection's two buffers: a request must fit the request buffer whole, and the
   * largest (a 1 MiB value and a 4 KiB key) does with room to spare; servers accept up to 4 MiB.
   */
  static final int BUFFER_BYTES = 2 << 20;

  private final Executor blocking;
  private final Optional<ClusterSecret> secret;

  /**
   * Creates the factory; {@code blocking} runs the (blocking) native connects, which prove {@code
   * secret} if present.
   */
  FabricConnectionFactory(Executor blocking, Optional<ClusterSecret> secret) {
    this.blocking = blocking;
    this.secret = secret;
  }

  @Override
  public String endpoint(ServerInfo server) {
    return server.hasFabric()
        ? server.fabricProvider() + "://" + server.host() + ":" + server.fabricPort()
        : null;
  }

  @Override
  public CompletableFuture<Connection> connect(ServerInfo server) {
    return CompletableFuture.supplyAsync(
        () ->
            new FabricConnection(
                FabricClient.connect(
                    options(server).withClientSecret(secret), server.host(), server.fabricPort())),
        blocking);
  }

  private static FabricOptions options(ServerInfo server) {
    FabricOptions defaults = FabricOptions.defaults(server.fabricProvider());
    // The tcp and verbs providers bind a local address: loopback for a local server, else any.
    String node =
        server.fabricProvider().equals("shm") || isLoopback(server.host()) ? defaults.node() : "";
    return new FabricOptions(
        defaults.provider(),
        node,
        defaults.host(),
        defaults.port(),
        defaults.workers(),
        BUFFER_BYTES,
        defaults.timeoutMillis());
  }

  private static boolean isLoopback(String host) {
    return host.equals("localhost") || host.startsWith("127.") || host.equals("::1");
  }

  @Override
  public void close() {}
}
