package io.kvs.client;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.security.ClusterSecret;
import io.kvs.core.wire.netty.ClientHandshakeHandler;
import io.kvs.core.wire.netty.WireFraming;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Netty TCP connections; one event loop group (daemon threads) for all of a client's servers. A
 * connection is handed out only once the server admitted it (the client handshake, proving the
 * client secret if configured; and before it the TLS handshake with a TLS context), so a refused
 * secret or certificate fails the connect with the handshake's error.
 */
final class NettyConnectionFactory implements ConnectionFactory {
  private static final int CONNECT_TIMEOUT_MILLIS = 3000;
  private static final int HANDSHAKE_TIMEOUT_MILLIS = 5000;

  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(
          Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors() / 2)),
          new DefaultThreadFactory("kvs-client-tcp", true),
          NioIoHandler.newFactory());
  private final Bootstrap bootstrap =
      new Bootstrap()
          .group(group)
          .channel(NioSocketChannel.class)
          .option(ChannelOption.TCP_NODELAY, true)
          .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_TIMEOUT_MILLIS);

  private final SslContext tls;
  private final Optional<ClusterSecret> clientSecret;

  /** Plain TCP if {@code tls} is null; proving {@code clientSecret} to servers if present. */
  NettyConnectionFactory(SslContext tls, Optional<ClusterSecret> clientSecret) {
    this.tls = tls;
    this.clientSecret = clientSecret;
  }

  @Override
  public String endpoint(ServerInfo server) {
    return ConnectionFactory.tcpEndpoint(server);
  }

  @Override
  public CompletableFuture<Connection> connect(ServerInfo server) {
    CompletableFuture<Connection> result = new CompletableFuture<>();
    NettyConnection.Handler handler = new NettyConnection.Handler();
    String name = server.host() + ":" + server.tcpPort();
    ClientHandshakeHandler handshake = new ClientHandshakeHandler(clientSecret, name);
    ChannelFuture connecting =
        bootstrap
            .clone()
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel channel) {
                    if (tls != null) {
                      channel
                          .pipeline()
                          .addLast(
                              "tls",
                              tls.newHandler(channel.alloc(), server.host(), server.tcpPort()));
                    }
                    WireFraming.addClientHandlers(channel.pipeline(), WireFraming.MAX_FRAME_BYTES);
                    channel
                        .pipeline()
                        .addAfter(
                            WireFraming.FRAME_ENCODER, ClientHandshakeHandler.NAME, handshake);
                    channel.pipeline().addLast("kvs-client", handler);
                  }
                })
            .connect(server.host(), server.tcpPort());
    connecting.addListener(
        done -> {
          if (!done.isSuccess()) {
            result.completeExceptionally(done.cause());
            return;
          }
          // The client handshake follows the TLS handshake (if any) on the same connection: once
          // the server admitted this client, the connection is ready.
          handshake
              .admitted()
              .orTimeout(HANDSHAKE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)
              .whenComplete(
                  (admitted, failure) -> {
                    if (failure == null) {
                      result.complete(new NettyConnection(connecting.channel(), handler));
                      return;
                    }
                    connecting.channel().close();
                    result.completeExceptionally(handshakeFailure(connecting, name, failure));
                  });
        });
    return result;
  }

  /** Why the handshake failed: the TLS handshake's error if that failed first. */
  private Throwable handshakeFailure(ChannelFuture connecting, String name, Throwable failure) {
    SslHandler ssl = connecting.channel().pipeline().get(SslHandler.class);
    if (tls != null && ssl != null) {
      Throwable tlsFailure = ssl.handshakeFuture().cause();
      if (tlsFailure != null) {
        return new KvsException(
            StatusCode.IO_ERROR,
            "TLS handshake with " + name + " failed: " + tlsFailure,
            tlsFailure);
      }
    }
    if (failure instanceof java.util.concurrent.TimeoutException) {
      return new KvsException(
          StatusCode.IO_ERROR,
          "handshake with " + name + ": no admission within " + HANDSHAKE_TIMEOUT_MILLIS + " ms");
    }
    return failure;
  }

  @Override
  public void close() {
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
  }
}
