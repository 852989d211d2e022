package io.kvs.bench.protocol;

import io.kvs.core.ClosedException;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import io.kvs.core.wire.netty.ClientHandshakeHandler;
import io.kvs.core.wire.netty.WireFraming;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** A pipelining Netty TCP client of the wire protocol (a pure-Java client, as applications use). */
final class NettyWireClient implements WireTransport {
  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final Map<Long, CompletableFuture<Reply>> pending = new ConcurrentHashMap<>();
  private final AtomicLong nextId = new AtomicLong(1);
  private final Channel channel;

  NettyWireClient(String host, int port) throws Exception {
    ClientHandshakeHandler handshake =
        new ClientHandshakeHandler(Optional.empty(), host + ":" + port);
    channel =
        new Bootstrap()
            .group(group)
            .channel(NioSocketChannel.class)
            .option(ChannelOption.TCP_NODELAY, true)
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    WireFraming.addClientHandlers(ch.pipeline(), WireFraming.MAX_FRAME_BYTES);
                    ch.pipeline()
                        .addAfter(
                            WireFraming.FRAME_ENCODER, ClientHandshakeHandler.NAME, handshake);
                    ch.pipeline()
                        .addLast(
                            new SimpleChannelInboundHandler<Reply>() {
                              @Override
                              protected void channelRead0(ChannelHandlerContext ctx, Reply reply) {
                                CompletableFuture<Reply> future = pending.remove(reply.requestId());
                                if (future != null) {
                                  future.complete(reply);
                                }
                              }

                              @Override
                              public void channelInactive(ChannelHandlerContext ctx) {
                                ClosedException closed = new ClosedException("connection closed");
                                pending.values().forEach(f -> f.completeExceptionally(closed));
                                pending.clear();
                              }
                            });
                  }
                })
            .connect(host, port)
            .sync()
            .channel();
    handshake.admitted().get(10, TimeUnit.SECONDS);
  }

  @Override
  public CompletableFuture<Reply> send(Request request) {
    long id = nextId.getAndIncrement();
    CompletableFuture<Reply> future = new CompletableFuture<>();
    pending.put(id, future);
    channel.writeAndFlush(request.withRequestId(id));
    return future;
  }

  @Override
  public void close() {
    channel.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }
}
