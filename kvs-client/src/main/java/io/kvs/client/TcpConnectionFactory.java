package io.kvs.client;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ServerInfo;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Netty TCP connections; one event loop group (daemon threads) for all of a client's servers. With
 * a TLS context a connection is handed out only once its handshake succeeded, so a refused
 * certificate fails the connect with the handshake's error.
 */
final class TcpConnectionFactory implements ConnectionFactory {
  private static final int CONNECT_TIMEOUT_MILLIS = 3000;

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

  /** Plain TCP if {@code tls} is null. */
  TcpConnectionFactory(SslContext tls) {
    this.tls = tls;
  }

  @Override
  public String endpoint(ServerInfo server) {
    return server.tcpPort() > 0 ? server.host() + ":" + server.tcpPort() : null;
  }

  @Override
  public CompletableFuture<Connection> connect(ServerInfo server) {
    CompletableFuture<Connection> result = new CompletableFuture<>();
    TcpConnection.Handler handler = new TcpConnection.Handler();
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
                    channel.pipeline().addLast("kvs-client", handler);
                  }
                })
            .connect(server.host(), server.tcpPort());
    connecting.addListener(
        done -> {
          if (!done.isSuccess()) {
            result.completeExceptionally(done.cause());
          } else if (tls == null) {
            result.complete(new TcpConnection(connecting.channel(), handler));
          } else {
            connecting
                .channel()
                .pipeline()
                .get(SslHandler.class)
                .handshakeFuture()
                .addListener(
                    handshake -> {
                      if (handshake.isSuccess()) {
                        result.complete(new TcpConnection(connecting.channel(), handler));
                      } else {
                        connecting.channel().close();
                        result.completeExceptionally(
                            new KvsException(
                                StatusCode.IO_ERROR,
                                "TLS handshake with "
                                    + server.host()
                                    + ":"
                                    + server.tcpPort()
                                    + " failed: "
                                    + handshake.cause(),
                                handshake.cause()));
                      }
                    });
          }
        });
    return result;
  }

  @Override
  public void close() {
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
  }
}
