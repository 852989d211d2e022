package io.kvs.server.tcp;

import io.kvs.core.security.ClusterSecret;
import io.kvs.core.security.TlsOptions;
import io.kvs.service.ClientDoor;
import io.kvs.service.RegionService;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client port, served by the native door ({@link ClientDoor}): shard threads, each running its
 * connections' requests to completion in the region service; no Java on the request path. With TLS
 * options every connection speaks TLS first (OpenSSL in the door's shards), mutual TLS if they
 * require client certificates.
 */
public final class NativeClientPort implements ClientPort {
  private static final Logger LOG = LoggerFactory.getLogger(NativeClientPort.class);

  private final ClientDoor door;

  private NativeClientPort(ClientDoor door) {
    this.door = door;
  }

  /**
   * Serves {@code service} as {@code options} say (its address, shard threads and bounds) to
   * clients proving {@code clientSecret} if present, over TLS if {@code tls} is present.
   *
   * @throws io.kvs.core.KvsException if it cannot listen, or a TLS file is missing or broken
   */
  public static NativeClientPort start(
      RegionService service,
      ClientPortOptions options,
      Optional<ClusterSecret> clientSecret,
      Optional<TlsOptions> tls) {
    if (clientSecret.isEmpty() && !tls.map(TlsOptions::requireClientAuth).orElse(false)) {
      LOG.warn(
          "SECURITY: the client port on {} serves ANYONE who can reach it (read and write any"
              + " key): start the server with --client-secret-file or mutual TLS, see"
              + " docs/OPERATIONS.md, Security",
          options.host());
    }
    return new NativeClientPort(
        ClientDoor.start(
            service,
            new ClientDoor.Options(
                options.host(),
                options.port(),
                options.shards(),
                options.maxConnections(),
                options.maxInFlightPerConnection(),
                options.maxFrameBytes(),
                clientSecret.map(ClusterSecret::bytes),
                (int) ClientPortOptions.HANDSHAKE_TIMEOUT.toMillis(),
                tls)));
  }

  @Override
  public int port() {
    return door.port();
  }

  @Override
  public long refusals() {
    return door.stats().refusals();
  }

  @Override
  public long requests() {
    return door.stats().requests();
  }

  @Override
  public int connections() {
    return (int) door.stats().connections();
  }

  @Override
  public long refusedConnections() {
    return door.stats().refusedConnections();
  }

  @Override
  public boolean[] probeShards() {
    return door.probe();
  }

  @Override
  public long outputStalls() {
    return door.stats().outputStalls();
  }

  @Override
  public void close() {
    door.close();
  }
}
