package io.kvs.client;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ServerInfo;
import java.lang.reflect.InvocationTargetException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/** Opens connections of one transport; owns what they share (event loops). */
interface ConnectionFactory {
  /**
   * The system property choosing how plain TCP is spoken: {@link #NETTY} (Netty event loops, as TLS
   * always is) or anything else ({@link DirectConnection}: no I/O thread, the caller writes its
   * request and reads its own reply; the default, which costs the client and the servers less CPU
   * from one caller to 128: docs/BENCHMARKS.md, "Where the rest goes").
   */
  String TCP_PROPERTY = "kvs.client.tcp";

  /** {@link #TCP_PROPERTY}'s value for Netty connections. */
  String NETTY = "netty";

  /**
   * The address this transport reaches {@code server} at, or null if the server does not serve it.
   */
  String endpoint(ServerInfo server);

  /** The client TCP port's address, or null if {@code server} has none. */
  static String tcpEndpoint(ServerInfo server) {
    return server.tcpPort() > 0 ? server.host() + ":" + server.tcpPort() : null;
  }

  /** Connects to {@code server}, asynchronously. */
  CompletableFuture<Connection> connect(ServerInfo server);

  /** Releases what the connections shared; close the connections first. */
  void close();

  /**
   * The factory of {@code transport}. The fabric factory is loaded by name, so that a client of the
   * tcp transport never loads a class of the optional {@code kvs-native} dependency.
   *
   * @param blocking runs blocking work (connects, the direct connections' reader tasks)
   * @param security TLS and the client secret for tcp, the client secret for the fabric bootstrap
   * @throws KvsException if the fabric transport is chosen and kvs-native is not on the class path
   */
  static ConnectionFactory create(Transport transport, Executor blocking, ClientSecurity security) {
    if (transport == Transport.TCP) {
      if (security.tcpTls() == null && !NETTY.equals(System.getProperty(TCP_PROPERTY))) {
        return new DirectConnectionFactory(blocking, security.options().clientSecret());
      }
      return new NettyConnectionFactory(security.tcpTls(), security.options().clientSecret());
    }
    try {
      Class.forName("io.kvs.fabric.FabricClient", false, ConnectionFactory.class.getClassLoader());
      return Class.forName("io.kvs.client.FabricConnectionFactory")
          .asSubclass(ConnectionFactory.class)
          .getDeclaredConstructor(Executor.class, Optional.class)
          .newInstance(blocking, security.options().clientSecret());
    } catch (ClassNotFoundException | LinkageError e) {
      throw new KvsException(
          StatusCode.INVALID_ARGUMENT,
          "the fabric transport needs io.kvs:kvs-native on the class path: " + e,
          e);
    } catch (InvocationTargetException e) {
      throw new KvsException(
          StatusCode.INTERNAL, "cannot start the fabric transport: " + e.getCause(), e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new KvsException(StatusCode.INTERNAL, "cannot start the fabric transport: " + e, e);
    }
  }
}
