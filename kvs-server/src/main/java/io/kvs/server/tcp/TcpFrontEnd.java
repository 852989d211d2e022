package io.kvs.server.tcp;

import io.kvs.core.security.ClusterSecret;
import io.kvs.core.security.RefusalLog;
import io.kvs.core.wire.netty.ServerHandshake;
import io.kvs.core.wire.netty.WireFraming;
import io.kvs.service.RegionService;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.handler.ssl.SslContext;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Netty TCP front end of a server: wire-protocol frames (docs/PROTOCOL.md, "Client TCP
 * framing") handed as bytes to a {@link RegionService}, which decodes and answers them natively.
 *
 * <ul>
 *   <li><b>No thread hop, no thread parked</b>: the event loop that read a frame hands it to the
 *       service ({@link RegionService#submit}) and writes the reply at once; a replicated write,
 *       whose reply comes when its backups hold it, is answered by the reply thread ({@code
 *       kvs-tcp-reply}), which takes such replies from the service in batches and hands each to its
 *       connection's event loop. Replies leave a connection in one flush per batch read.
 *   <li><b>Backpressure</b>: a connection with {@code maxInFlightPerConnection} requests not yet
 *       answered stops being read until it drops below half; replies waiting in the service are
 *       thus bounded by {@code maxConnections} times that limit. A connection whose replies are not
 *       being read (its output above {@link #OUTPUT_HIGH_BYTES}: Netty's channel not writable)
 *       stops being read too, until its output drains below {@link #OUTPUT_LOW_BYTES}; frames
 *       already decoded wait, in order, meanwhile. So a client that sends requests and never reads
 *       the replies costs at most one read of frames, its requests in flight and about one high
 *       water mark of replies, however long it keeps sending.
 *   <li><b>Connections</b>: at most {@code maxConnections} at once; one beyond is closed as soon as
 *       it is accepted, and counted ({@link #refusedConnections()}).
 *   <li><b>Frames</b> above {@code maxFrameBytes} close the connection (the peer is broken or
 *       hostile); everyone else is served on.
 *   <li><b>Client credentials</b>: every connection starts with the client handshake ({@link
 *       ServerHandshake}, docs/PROTOCOL.md "Client TCP handshake"): with a client secret, only a
 *       client that proves it is served; a refused one is told why and closed. This is a client's
 *       door: whatever its bytes say, a frame is a client request, never a replication message.
 *   <li><b>TLS</b> when started with an {@link SslContext}: an {@link
 *       io.netty.handler.ssl.SslHandler} before the framing (mutual TLS if the context requires
 *       client certificates; a client without one fails its handshake and is closed, everyone else
 *       is served on). Without one, nothing is added to the pipeline: no cost per request.
 *   <li><b>Graceful shutdown</b>: {@link #close()} stops accepting, waits (bounded) for the replies
 *       still to come, then closes the connections.
 * </ul>
 */
public final class TcpFrontEnd implements ClientPort {
  private static final Logger LOG = LoggerFactory.getLogger(TcpFrontEnd.class);

  /** How long a new connection has to complete its handshake. */
  public static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);

  /**
   * Settings; {@link #defaults()} for a one-machine server.
   *
   * @param maxConnections client connections open at once at most (at least 1; default {@link
   *     #DEFAULT_MAX_CONNECTIONS}): one beyond is closed as soon as it is accepted
   */
  public record Options(
      String host,
      int port,
      int eventLoops,
      int maxInFlightPerConnection,
      int maxFrameBytes,
      int maxConnections) {
    /**
     * The default bound on client connections: clients keep one connection per server, so this is
     * room for a thousand client processes, and with 256 requests in flight on each, replies
     * waiting in the service stay below 256 Ki.
     */
    public static final int DEFAULT_MAX_CONNECTIONS = 1024;

    public Options {
      if (maxConnections < 1) {
        throw new IllegalArgumentException("maxConnections must be at least 1: " + maxConnections);
      }
    }

    /** Options with at most {@link #DEFAULT_MAX_CONNECTIONS} connections. */
    public Options(
        String host, int port, int eventLoops, int maxInFlightPerConnection, int maxFrameBytes) {
      this(
          host, port, eventLoops, maxInFlightPerConnection, maxFrameBytes, DEFAULT_MAX_CONNECTIONS);
    }

    /** Loopback, any port, one event loop per core, 256 per connection, 8 MiB frames. */
    public static Options defaults() {
      return new Options(
          "127.0.0.1",
          0,
          Runtime.getRuntime().availableProcessors(),
          256,
          WireFraming.MAX_FRAME_BYTES);
    }

    /** These options with another port. */
    public Options withPort(int newPort) {
      return new Options(
          host, newPort, eventLoops, maxInFlightPerConnection, maxFrameBytes, maxConnections);
    }

    /** These options listening on another address. */
    public Options withHost(String newHost) {
      return new Options(
          newHost, port, eventLoops, maxInFlightPerConnection, maxFrameBytes, maxConnections);
    }

    /** These options with {@code loops} event loops. */
    public Options withEventLoops(int loops) {
      return new Options(
          host, port, loops, maxInFlightPerConnection, maxFrameBytes, maxConnections);
    }

    /** These options with at most {@code connections} client connections (at least 1). */
    public Options withMaxConnections(int connections) {
      return new Options(
          host, port, eventLoops, maxInFlightPerConnection, maxFrameBytes, connections);
    }
  }

  /**
   * A connection whose replies waiting to be written exceed this many bytes stops being read
   * (Netty's high water mark): a client that does not read its replies cannot grow the server's
   * memory. Above the largest reply (a 1 MiB value), so one reply alone never stops a connection.
   */
  public static final int OUTPUT_HIGH_BYTES = 2 << 20;

  /** A connection stopped by {@link #OUTPUT_HIGH_BYTES} is read again below this. */
  public static final int OUTPUT_LOW_BYTES = 512 << 10;

  /** Replies taken from the service at once, at most. */
  private static final int REPLY_BATCH = 256;

  /** How long close() waits for replies still to come (beyond the replication timeout). */
  private static final long CLOSE_WAIT_MILLIS = 15_000;

  private final RegionService service;
  private final Options options;
  private final EventLoopGroup bossGroup;
  private final EventLoopGroup ioGroup;
  private final Channel serverChannel;
  private final Thread replyThread;
  private final AtomicLong requests = new AtomicLong();
  private final AtomicInteger connections = new AtomicInteger();
  private final AtomicLong refused = new AtomicLong();
  private final AtomicLong outputStalls = new AtomicLong();
  private final AtomicLong nextTag = new AtomicLong(1);

  /** Requests whose replies come through the reply thread, by tag. */
  private final ConcurrentHashMap<Long, RequestHandler> awaiting = new ConcurrentHashMap<>();

  private volatile boolean running = true;

  private final RefusalLog refusals = new RefusalLog(LOG, "client connection");

  private TcpFrontEnd(
      RegionService service, Options options, SslContext tls, Optional<ClusterSecret> clientSecret)
      throws InterruptedException {
    this.service = service;
    this.options = options;
    this.bossGroup =
        new MultiThreadIoEventLoopGroup(
            1, new DefaultThreadFactory("kvs-tcp-accept"), NioIoHandler.newFactory());
    this.ioGroup =
        new MultiThreadIoEventLoopGroup(
            options.eventLoops(),
            new DefaultThreadFactory("kvs-tcp-io"),
            NioIoHandler.newFactory());
    this.replyThread = new Thread(this::takeReplies, "kvs-tcp-reply");
    replyThread.setDaemon(true);
    replyThread.start();
    ServerBootstrap bootstrap =
        new ServerBootstrap()
            .group(bossGroup, ioGroup)
            .channel(NioServerSocketChannel.class)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childOption(
                ChannelOption.WRITE_BUFFER_WATER_MARK,
                new WriteBufferWaterMark(OUTPUT_LOW_BYTES, OUTPUT_HIGH_BYTES))
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel channel) {
                    if (!admit(channel)) {
                      return;
                    }
                    if (tls != null) {
                      channel.pipeline().addLast(tls.newHandler(channel.alloc()));
                    }
                    channel
                        .pipeline()
                        .addLast(
                            new LengthFieldBasedFrameDecoder(
                                ByteOrder.LITTLE_ENDIAN, options.maxFrameBytes(), 0, 4, 0, 4, true),
                            new LengthFieldPrepender(ByteOrder.LITTLE_ENDIAN, 4, 0, false),
                            new ServerHandshake(clientSecret, refusals, HANDSHAKE_TIMEOUT),
                            new RequestHandler());
                  }
                });
    this.serverChannel =
        bootstrap.bind(new InetSocketAddress(options.host(), options.port())).sync().channel();
  }

  /**
   * Starts serving {@code service} on {@code options.host():options.port()}, to any client (no
   * client secret, plain TCP).
   */
  public static TcpFrontEnd start(RegionService service, Options options) {
    return start(service, options, null, Optional.empty());
  }

  /**
   * {@link #start(RegionService, Options)} with TLS of {@code tls} (null: plain TCP), serving only
   * clients that prove {@code clientSecret} if present.
   */
  public static TcpFrontEnd start(
      RegionService service,
      Options options,
      SslContext tls,
      Optional<ClusterSecret> clientSecret) {
    if (clientSecret.isEmpty() && tls == null) {
      LOG.warn(
          "SECURITY: the client port on {} serves ANYONE who can reach it (read and write any"
              + " key): start the server with --client-secret-file or mutual TLS, see"
              + " docs/OPERATIONS.md, Security",
          options.host());
    }
    try {
      return new TcpFrontEnd(service, options, tls, clientSecret);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while binding", e);
    }
  }

  /** The port it listens on. */
  @Override
  public int port() {
    return ((InetSocketAddress) serverChannel.localAddress()).getPort();
  }

  /** Connections refused at the handshake so far. */
  @Override
  public long refusals() {
    return refusals.refusals();
  }

  /** Requests answered so far. */
  @Override
  public long requests() {
    return requests.get();
  }

  /** Client connections open now. */
  @Override
  public int connections() {
    return connections.get();
  }

  /** Connections closed on arrival so far: {@code maxConnections} were open. */
  @Override
  public long refusedConnections() {
    return refused.get();
  }

  /**
   * Times a connection stopped being read because its replies were not being read (its output above
   * {@link #OUTPUT_HIGH_BYTES}).
   */
  @Override
  public long outputStalls() {
    return outputStalls.get();
  }

  /**
   * Whether {@code channel} may stay: fewer than {@code maxConnections} are open. One that may not
   * is closed at once.
   */
  private boolean admit(SocketChannel channel) {
    if (connections.incrementAndGet() > options.maxConnections()) {
      connections.decrementAndGet();
      long count = refused.incrementAndGet();
      if (Long.bitCount(count) == 1) { // the 1st, 2nd, 4th, 8th...: bounded logging
        LOG.warn(
            "refused a client connection from {}: {} are open, the most allowed ({} refused so"
                + " far)",
            channel.remoteAddress(),
            options.maxConnections(),
            count);
      }
      channel.close();
      return false;
    }
    channel.closeFuture().addListener(closed -> connections.decrementAndGet());
    return true;
  }

  @Override
  public void close() {
    serverChannel.close().syncUninterruptibly();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_WAIT_MILLIS);
    while (!awaiting.isEmpty() && System.nanoTime() < deadline) {
      LockSupport.parkNanos(1_000_000);
    }
    running = false;
    try {
      replyThread.join(CLOSE_WAIT_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    ioGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    bossGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** The reply thread: hands replies that came after their submit to their connections. */
  private void takeReplies() {
    long[] tags = new long[REPLY_BATCH];
    byte[][] replies = new byte[REPLY_BATCH][];
    while (running) {
      int taken;
      try {
        taken = service.takeReplies(50, tags, replies);
      } catch (RuntimeException closed) {
        return; // the service closed under us: nothing more will come
      }
      for (int i = 0; i < taken; i++) {
        RequestHandler handler = awaiting.remove(tags[i]);
        byte[] reply = replies[i];
        replies[i] = null;
        if (handler != null) {
          handler.answerLater(reply);
        }
      }
    }
  }

  /** Submits each frame on the event loop; replies are written back on it. */
  private final class RequestHandler extends SimpleChannelInboundHandler<ByteBuf> {
    private ChannelHandlerContext context; // set once active
    private int inFlight; // event loop only
    private boolean unflushed; // event loop only
    private boolean tooManyInFlight; // event loop only: stopped by maxInFlightPerConnection
    private boolean updating; // event loop only: updateReading is running
    private boolean changed; // event loop only: writability changed while it ran

    /**
     * Frames decoded while reading was stopped (event loop only): what the last read held past the
     * frame that stopped it, so at most one read's worth (the decoder's cumulation); handled, in
     * order, before anything read later.
     */
    private final ArrayDeque<ByteBuf> held = new ArrayDeque<>();

    @Override
    public void handlerAdded(ChannelHandlerContext added) {
      this.context = added;
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext removed) {
      held.forEach(ByteBuf::release);
      held.clear();
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
      if (!held.isEmpty() || !mayRead()) {
        held.add(frame.retain());
      } else {
        handle(frame);
      }
      updateReading();
    }

    /** Submits {@code frame} to the service; writes its reply if it came at once. */
    private void handle(ByteBuf frame) {
      ByteBuf request = frame.isDirect() ? frame.retain() : copyToDirect(frame);
      long tag = nextTag.getAndIncrement();
      byte[] reply;
      // Registered first: the reply may come on the reply thread before submit returns.
      awaiting.put(tag, this);
      try {
        reply =
            service.submit(
                request.nioBuffer(request.readerIndex(), request.readableBytes()),
                0,
                request.readableBytes(),
                tag);
      } finally {
        request.release();
      }
      if (reply != null) {
        awaiting.remove(tag);
        requests.incrementAndGet();
        context.write(Unpooled.wrappedBuffer(reply));
        unflushed = true;
        return;
      }
      inFlight++;
      if (inFlight >= options.maxInFlightPerConnection()) {
        tooManyInFlight = true;
      }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
      updateReading();
      ctx.fireChannelWritabilityChanged();
    }

    /** Whether the connection has room for requests in flight and its replies are being read. */
    private boolean mayRead() {
      return !tooManyInFlight && context.channel().isWritable();
    }

    /**
     * Handles the frames held while it may read, flushes what it wrote unless a read-complete will,
     * then reads the connection only while it may (stopping it otherwise). A writability change
     * inside (a write, a flush that empties the output) makes it look again.
     */
    private void updateReading() {
      if (updating) {
        changed = true; // the outer call looks again
        return;
      }
      updating = true;
      try {
        do {
          changed = false;
          boolean drained = false;
          while (!held.isEmpty() && mayRead()) {
            ByteBuf frame = held.poll();
            try {
              handle(frame);
            } finally {
              frame.release();
            }
            drained = true;
          }
          if (unflushed && (drained || !mayRead())) {
            // No read-complete follows frames handled from `held`, nor a stopped connection's.
            unflushed = false;
            context.flush();
          }
          Channel channel = context.channel();
          boolean read = held.isEmpty() && mayRead();
          if (channel.config().isAutoRead() != read) {
            if (!read && !channel.isWritable()) {
              outputStalls.incrementAndGet();
            }
            channel.config().setAutoRead(read);
          }
        } while (changed);
      } finally {
        updating = false;
      }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      if (unflushed) {
        unflushed = false;
        ctx.flush();
      }
    }

    /** A reply that came through the reply thread. */
    void answerLater(byte[] reply) {
      context.executor().execute(() -> finished(reply));
    }

    private void finished(byte[] reply) {
      requests.incrementAndGet();
      context.writeAndFlush(Unpooled.wrappedBuffer(reply));
      inFlight--;
      if (inFlight <= options.maxInFlightPerConnection() / 2) {
        tooManyInFlight = false;
      }
      updateReading();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close(); // a broken or hostile peer: drop it, serve the others
    }

    private ByteBuf copyToDirect(ByteBuf frame) {
      ByteBuf direct = frame.alloc().directBuffer(frame.readableBytes());
      direct.writeBytes(frame, frame.readerIndex(), frame.readableBytes());
      return direct;
    }
  }
}
