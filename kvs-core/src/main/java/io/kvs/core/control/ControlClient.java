package io.kvs.core.control;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Sends control commands to region servers, one connection per command (they are rare), each
 * bounded by a timeout. Thread-safe; close it to release its event loop.
 */
public final class ControlClient implements AutoCloseable {
  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final Duration timeout;

  public ControlClient(Duration timeout) {
    this.timeout = timeout;
  }

  /**
   * Sends {@code command} to the control port at {@code host:port} and returns the reply.
   *
   * @throws KvsException UNAVAILABLE-like IO_ERROR if the server cannot be reached or does not
   *     answer in time
   */
  public ControlReply call(String host, int port, ControlCommand command) {
    return call(host, port, command, timeout);
  }

  /** {@link #call(String, int, ControlCommand)} bounded by {@code bound} instead. */
  public ControlReply call(String host, int port, ControlCommand command, Duration bound) {
    CompletableFuture<ControlReply> reply = new CompletableFuture<>();
    ChannelFuture connect =
        new Bootstrap()
            .group(group)
            .channel(NioSocketChannel.class)
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) bound.toMillis())
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel channel) {
                    ControlFraming.addClientHandlers(channel.pipeline());
                    channel
                        .pipeline()
                        .addLast(
                            new SimpleChannelInboundHandler<ControlReply>() {
                              @Override
                              protected void channelRead0(
                                  ChannelHandlerContext context, ControlReply message) {
                                reply.complete(message);
                                context.close();
                              }

                              @Override
                              public void exceptionCaught(
                                  ChannelHandlerContext context, Throwable cause) {
                                reply.completeExceptionally(cause);
                                context.close();
                              }

                              @Override
                              public void channelInactive(ChannelHandlerContext context) {
                                reply.completeExceptionally(
                                    new IllegalStateException("connection closed"));
                              }
                            });
                  }
                })
            .connect(host, port);
    Channel channel = connect.channel();
    connect.addListener(
        f -> {
          if (f.isSuccess()) {
            channel.writeAndFlush(command);
          } else {
            reply.completeExceptionally(f.cause());
          }
        });
    try {
      return reply.get(bound.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KvsException(StatusCode.IO_ERROR, "interrupted calling " + host + ":" + port, e);
    } catch (ExecutionException e) {
      throw new KvsException(
          StatusCode.IO_ERROR,
          "control call to " + host + ":" + port + " failed: " + e.getCause().getMessage(),
          e.getCause());
    } catch (TimeoutException e) {
      throw new KvsException(
          StatusCode.IO_ERROR, "control call to " + host + ":" + port + " timed out", e);
    } finally {
      channel.close();
    }
  }

  @Override
  public void close() {
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }
}
