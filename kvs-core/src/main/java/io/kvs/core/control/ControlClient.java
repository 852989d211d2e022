package io.kvs.core.control;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.security.ClusterSecret;
import io.kvs.core.security.SecurityOptions;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
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
import io.netty.handler.ssl.SslContext;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Sends control commands to region servers, one connection per command (they are rare), each
 * bounded by a timeout. Each connection starts with the server's challenge; with a cluster secret
 * the client answers it with a proof of the secret bound to the command, and with TLS it presents
 * its certificate (docs/PROTOCOL.md, "Control RPC authentication"). Thread-safe; close it to
 * release its event loop.
 */
public final class ControlClient implements AutoCloseable {
  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final Duration timeout;
  private final Optional<ClusterSecret> secret;
  private final Optional<SslContext> tls;

  /** How much longer than its bound a blocking call waits for the event loop to end it. */
  private static final long STUCK_LOOP_MILLIS = 1_000;

  /** A client with no credentials: only servers that authenticate nobody answer it. */
  public ControlClient(Duration timeout) {
    this(timeout, SecurityOptions.none());
  }

  /** A client proving {@code security}'s secret and presenting its TLS certificate, if any. */
  public ControlClient(Duration timeout, SecurityOptions security) {
    this.timeout = timeout;
    this.secret = security.secret();
    this.tls = security.tls().map(options -> options.clientContext());
  }

  /**
   * Sends {@code command} to the control port at {@code host:port} and returns the reply.
   *
   * @throws KvsException UNAVAILABLE-like IO_ERROR if the server cannot be reached or does not
   *     answer in time; INVALID_ARGUMENT if the server requires a secret this client lacks, or this
   *     client has one and the server requires none (it cannot be the cluster's)
   */
  public ControlReply call(String host, int port, ControlCommand command) {
    return call(host, port, command, timeout);
  }

  /** {@link #call(String, int, ControlCommand)} bounded by {@code bound} instead. */
  public ControlReply call(String host, int port, ControlCommand command, Duration bound) {
    CompletableFuture<ControlReply> reply = callAsync(host, port, command, bound);
    try {
      // The event loop ends the call within its bound; waiting a little longer only guards
      // against a loop that is itself stuck.
      return reply.get(bound.toMillis() + STUCK_LOOP_MILLIS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      reply.cancel(false);
      throw new KvsException(StatusCode.IO_ERROR, "interrupted calling " + host + ":" + port, e);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof KvsException failure
          ? failure
          : new KvsException(StatusCode.IO_ERROR, String.valueOf(e.getCause()), e.getCause());
    } catch (TimeoutException e) {
      reply.cancel(false);
      throw new KvsException(
          StatusCode.IO_ERROR, "control call to " + host + ":" + port + " timed out", e);
    }
  }

  /**
   * Sends {@code command} to {@code host:port} without waiting: the future completes with the
   * reply, or exceptionally with a {@link KvsException} (as {@link #call(String, int,
   * ControlCommand)} throws) once {@code bound} passed without one. Its connection is closed when
   * it completes, however it does (cancelling it too). Dependent stages run on this client's event
   * loop unless given an executor: they must not block.
   */
  public CompletableFuture<ControlReply> callAsync(
      String host, int port, ControlCommand command, Duration bound) {
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
                    tls.ifPresent(
                        context ->
                            channel
                                .pipeline()
                                .addLast(context.newHandler(channel.alloc(), host, port)));
                    ControlFraming.addFraming(channel.pipeline());
                    channel.pipeline().addLast(new Exchange(command, reply));
                  }
                })
            .connect(host, port);
    Channel channel = connect.channel();
    connect.addListener(
        f -> {
          if (!f.isSuccess()) {
            reply.completeExceptionally(f.cause());
          }
        });
    ScheduledFuture<?> timer =
        group.schedule(
            () -> reply.completeExceptionally(new TimeoutException()),
            bound.toNanos(),
            TimeUnit.NANOSECONDS);
    CompletableFuture<ControlReply> result = new CompletableFuture<>();
    reply.whenComplete(
        (done, failure) -> {
          timer.cancel(false);
          channel.close();
          if (failure == null) {
            result.complete(done);
          } else {
            result.completeExceptionally(failed(host, port, failure));
          }
        });
    result.whenComplete(
        (done, failure) -> {
          if (result.isCancelled()) {
            reply.cancel(false); // closes the connection
          }
        });
    return result;
  }

  /** {@code failure} of a call to {@code host:port} as the {@link KvsException} callers get. */
  private static KvsException failed(String host, int port, Throwable failure) {
    Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
    if (cause instanceof TimeoutException || cause instanceof CancellationException) {
      return new KvsException(
          StatusCode.IO_ERROR, "control call to " + host + ":" + port + " timed out", cause);
    }
    StatusCode status =
        cause instanceof KvsException refusal ? refusal.status() : StatusCode.IO_ERROR;
    return new KvsException(
        status, "control call to " + host + ":" + port + " failed: " + cause.getMessage(), cause);
  }

  /** One command's exchange: the challenge in, proof and command out, the reply in. */
  private final class Exchange extends SimpleChannelInboundHandler<ByteBuf> {
    private final ControlCommand command;
    private final CompletableFuture<ControlReply> reply;
    private boolean challenged;

    Exchange(ControlCommand command, CompletableFuture<ControlReply> reply) {
      this.command = command;
      this.reply = reply;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext context, ByteBuf frame) {
      byte[] body = ByteBufUtil.getBytes(frame);
      if (challenged) {
        reply.complete(ControlJson.decodeReply(body));
        context.close();
        return;
      }
      challenged = true;
      JsonNode challenge = ClusterJson.read(body);
      byte[] nonce = HexFormat.of().parseHex(ClusterJson.text(challenge, "challenge"));
      boolean required = challenge.path("proofRequired").asBoolean(false);
      byte[] commandBytes = ControlJson.encode(command);
      if (secret.isPresent() && !required) {
        throw new KvsException(
            StatusCode.INVALID_ARGUMENT,
            "the server does not authenticate control commands (started without --secret-file),"
                + " so it cannot be this cluster's; refusing to send it a command");
      }
      if (secret.isEmpty() && required) {
        throw new KvsException(
            StatusCode.INVALID_ARGUMENT,
            "the server requires the cluster secret (--secret-file) and this client has none");
      }
      if (secret.isPresent()) {
        byte[] proof = secret.get().prove(ControlGate.PURPOSE, nonce, commandBytes);
        context.write(Unpooled.wrappedBuffer(ControlGate.proofFrame(proof)));
      }
      context.writeAndFlush(Unpooled.wrappedBuffer(commandBytes));
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext context, Throwable cause) {
      reply.completeExceptionally(cause);
      context.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext context) {
      reply.completeExceptionally(new IllegalStateException("connection closed"));
    }
  }

  @Override
  public void close() {
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }
}
