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
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Sends control commands to region servers, each bounded by a timeout, over connections it keeps
 * per server: a command takes an idle connection to its server if there is one (the server's
 * challenge for it already came), else connects. Each command proves itself against a challenge of
 * its own: the first comes on connect, the next after each reply; with a cluster secret the client
 * answers it with a proof of the secret bound to the command, and with TLS it presents its
 * certificate (docs/PROTOCOL.md, "Control RPC authentication"). A connection carries one command at
 * a time; after its reply it waits idle for the next, at most {@link #IDLE_PER_SERVER} per server
 * and for at most {@link #IDLE} (then it is closed); one whose command failed or timed out is
 * closed. Thread-safe; close it to release its event loop and connections.
 */
public final class ControlClient implements AutoCloseable {
  /** Idle connections kept per server at most; a connection finding no room is closed. */
  public static final int IDLE_PER_SERVER = 8;

  /** How long a connection is kept idle (the server keeps its side longer: ControlGate#IDLE). */
  public static final Duration IDLE = Duration.ofSeconds(30);

  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final Duration timeout;
  private final Optional<ClusterSecret> secret;
  private final Optional<SslContext> tls;
  private final Map<String, ArrayDeque<Session>> idle = new HashMap<>(); // under this
  private boolean closed; // under this

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
   * ControlCommand)} throws) once {@code bound} passed without one. Its connection is closed if it
   * fails, times out or is cancelled, and kept for the next command otherwise. Dependent stages run
   * on this client's event loop unless given an executor: they must not block.
   */
  public CompletableFuture<ControlReply> callAsync(
      String host, int port, ControlCommand command, Duration bound) {
    CompletableFuture<ControlReply> reply = new CompletableFuture<>();
    Exchange exchange = new Exchange(command, reply);
    Session kept = takeIdle(host, port);
    if (kept != null) {
      exchange.channel = kept.channel;
      kept.channel
          .eventLoop()
          .execute(() -> kept.start(exchange, () -> connect(host, port, exchange, bound)));
    } else {
      connect(host, port, exchange, bound);
    }
    ScheduledFuture<?> timer =
        group.schedule(
            () -> reply.completeExceptionally(new TimeoutException()),
            bound.toNanos(),
            TimeUnit.NANOSECONDS);
    CompletableFuture<ControlReply> result = new CompletableFuture<>();
    reply.whenComplete(
        (done, failure) -> {
          timer.cancel(false);
          if (failure == null) {
            result.complete(done);
          } else {
            exchange.channel.close(); // the session is in no known state: not reused
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

  /**
   * A new connection to {@code host:port} (connected within {@code bound}) whose first challenge
   * starts {@code exchange}.
   */
  private void connect(String host, int port, Exchange exchange, Duration bound) {
    Session session = new Session(host, port);
    session.pending = exchange;
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
                    channel.pipeline().addLast(session);
                  }
                })
            .connect(host, port);
    exchange.channel = connect.channel();
    connect.addListener(
        f -> {
          if (!f.isSuccess()) {
            exchange.reply.completeExceptionally(f.cause());
          }
        });
  }

  private static String key(String host, int port) {
    return host + ":" + port;
  }

  /** An idle connection to {@code host:port}, or null: none (those closed meanwhile dropped). */
  private synchronized Session takeIdle(String host, int port) {
    ArrayDeque<Session> sessions = idle.get(key(host, port));
    while (sessions != null && !sessions.isEmpty()) {
      Session session = sessions.pollLast(); // the most recently used: the least likely to idle out
      if (session.channel.isActive()) {
        return session;
      }
    }
    return null;
  }

  /** Keeps {@code session} for the next command to its server; false: no room, or closed. */
  private synchronized boolean keepIdle(Session session) {
    if (closed) {
      return false;
    }
    ArrayDeque<Session> sessions =
        idle.computeIfAbsent(key(session.host, session.port), k -> new ArrayDeque<>());
    sessions.removeIf(each -> !each.channel.isActive());
    if (sessions.size() >= IDLE_PER_SERVER) {
      return false;
    }
    sessions.addLast(session);
    return true;
  }

  /** Connections kept idle now, to every server (tests). */
  synchronized int idleConnections() {
    return idle.values().stream().mapToInt(ArrayDeque::size).sum();
  }

  private synchronized void forget(Session session) {
    ArrayDeque<Session> sessions = idle.get(key(session.host, session.port));
    if (sessions != null) {
      sessions.remove(session);
      if (sessions.isEmpty()) {
        idle.remove(key(session.host, session.port));
      }
    }
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

  /** One command and its reply (completed once, whatever ends it). */
  private static final class Exchange {
    final ControlCommand command;
    final CompletableFuture<ControlReply> reply;
    volatile Channel channel; // the connection that carries it (a fresh one replaces a kept one)

    Exchange(ControlCommand command, CompletableFuture<ControlReply> reply) {
      this.command = command;
      this.reply = reply;
    }
  }

  /**
   * One connection's handler, on its event loop: the challenge in, then for each command proof and
   * command out and the reply in, then the next challenge; between commands the connection is idle.
   */
  private final class Session extends SimpleChannelInboundHandler<ByteBuf> {
    final String host;
    final int port;
    volatile Channel channel;
    private byte[] nonce; // the challenge not answered yet, null: none came
    private boolean required;
    private Exchange pending; // waits for a challenge
    private Runnable pendingElsewhere; // for a pending command on a kept connection: where it goes
    private Exchange running; // sent, waits for its reply
    private ScheduledFuture<?> idleTimer;

    Session(String host, int port) {
      this.host = host;
      this.port = port;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext context) {
      channel = context.channel();
    }

    /**
     * Runs {@code exchange} on this kept connection once its challenge is here (it follows the last
     * reply), or {@code elsewhere} if the connection closed before the command was sent (a fresh
     * connection carries it).
     */
    void start(Exchange exchange, Runnable elsewhere) {
      if (idleTimer != null) {
        idleTimer.cancel(false);
        idleTimer = null;
      }
      if (!channel.isActive()) {
        elsewhere.run();
        return;
      }
      if (nonce == null) {
        pending = exchange;
        pendingElsewhere = elsewhere;
        return;
      }
      send(exchange);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext context, ByteBuf frame) {
      byte[] body = ByteBufUtil.getBytes(frame);
      if (running != null) {
        Exchange done = running;
        running = null;
        ControlReply reply;
        try {
          reply = ControlJson.decodeReply(body);
        } catch (RuntimeException e) {
          done.reply.completeExceptionally(e);
          channel.close();
          return;
        }
        // Kept before the caller hears of the reply, so that its next command finds it; the
        // challenge for that command follows the reply.
        keepOrClose();
        done.reply.complete(reply);
        return;
      }
      JsonNode challenge = ClusterJson.read(body);
      nonce = HexFormat.of().parseHex(ClusterJson.text(challenge, "challenge"));
      required = challenge.path("proofRequired").asBoolean(false);
      Exchange next = pending;
      pending = null;
      pendingElsewhere = null;
      if (next == null) {
        return; // kept already: the next command is sent when it comes
      }
      if (next.reply.isDone()) {
        keepOrClose(); // timed out or cancelled before its challenge came
        return;
      }
      send(next);
    }

    private void send(Exchange exchange) {
      String refusal =
          secret.isPresent() && !required
              ? "the server does not authenticate control commands (started without"
                  + " --secret-file), so it cannot be this cluster's; refusing to send it a command"
              : secret.isEmpty() && required
                  ? "the server requires the cluster secret (--secret-file) and this client has"
                      + " none"
                  : null;
      if (refusal != null) {
        exchange.reply.completeExceptionally(
            new KvsException(StatusCode.INVALID_ARGUMENT, refusal));
        channel.close();
        return;
      }
      running = exchange;
      byte[] commandBytes = ControlJson.encode(exchange.command);
      if (secret.isPresent()) {
        byte[] proof = secret.get().prove(ControlGate.PURPOSE, nonce, commandBytes);
        channel.write(Unpooled.wrappedBuffer(ControlGate.proofFrame(proof)));
      }
      nonce = null; // each challenge answers one command
      channel.writeAndFlush(Unpooled.wrappedBuffer(commandBytes));
    }

    /** Between commands: kept for the next one, closed after IDLE unused or if there is no room. */
    private void keepOrClose() {
      if (!keepIdle(this)) {
        channel.close();
        return;
      }
      idleTimer =
          channel
              .eventLoop()
              .schedule(
                  () -> {
                    forget(this);
                    channel.close();
                  },
                  IDLE.toNanos(),
                  TimeUnit.NANOSECONDS);
    }

    private void fail(Throwable cause) {
      if (pendingElsewhere != null) {
        // Taken from the idle ones, closed before the command went: not sent, so it goes on a
        // fresh connection.
        Runnable elsewhere = pendingElsewhere;
        pendingElsewhere = null;
        pending = null;
        elsewhere.run();
      }
      Exchange[] exchanges = {pending, running};
      pending = null;
      running = null;
      for (Exchange exchange : exchanges) {
        if (exchange != null) {
          exchange.reply.completeExceptionally(cause);
        }
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext context, Throwable cause) {
      fail(cause);
      context.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext context) {
      forget(this);
      if (idleTimer != null) {
        idleTimer.cancel(false);
      }
      fail(new IllegalStateException("connection closed"));
    }
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      idle.values().forEach(sessions -> sessions.forEach(session -> session.channel.close()));
      idle.clear();
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }
}
