package io.kvs.server.tcp;

import io.kvs.core.StatusCode;
import io.kvs.core.wire.Opcode;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.WireCodec;
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
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The Netty TCP front end of a server: wire-protocol frames (docs/PROTOCOL.md, "Netty TCP framing")
 * handed as bytes to a {@link RegionService}, which decodes and answers them natively.
 *
 * <ul>
 *   <li><b>Bounded worker pool</b>: requests run on {@code workers} threads (the engine may block
 *       on I/O), never on the event loops; its queue is bounded.
 *   <li><b>Backpressure</b>: a connection with {@code maxInFlightPerConnection} requests in the
 *       pool stops being read until it drops below half; when the pool's queue is full the request
 *       is answered OVERLOADED.
 *   <li><b>Frames</b> above {@code maxFrameBytes} close the connection (the peer is broken or
 *       hostile); everyone else is served on.
 *   <li><b>Graceful shutdown</b>: {@link #close()} stops accepting, lets requests in the pool
 *       finish and their replies go out, then closes the connections.
 * </ul>
 */
public final class TcpFrontEnd implements AutoCloseable {
  /** Settings; {@link #defaults()} for a one-machine server. */
  public record Options(
      String host,
      int port,
      int eventLoops,
      int workers,
      int queue,
      int maxInFlightPerConnection,
      int maxFrameBytes) {
    /** Loopback, any port, 1 event loop, 2 workers, 4096 queued, 256 per connection, 8 MiB. */
    public static Options defaults() {
      return new Options("127.0.0.1", 0, 1, 2, 4096, 256, WireFraming.MAX_FRAME_BYTES);
    }

    /** These options with another port. */
    public Options withPort(int newPort) {
      return new Options(
          host, newPort, eventLoops, workers, queue, maxInFlightPerConnection, maxFrameBytes);
    }

    /** These options listening on another address. */
    public Options withHost(String newHost) {
      return new Options(
          newHost, port, eventLoops, workers, queue, maxInFlightPerConnection, maxFrameBytes);
    }
  }

  private final RegionService service;
  private final Options options;
  private final EventLoopGroup bossGroup;
  private final EventLoopGroup ioGroup;
  private final ThreadPoolExecutor pool;
  private final Channel serverChannel;
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong overloaded = new AtomicLong();

  private TcpFrontEnd(RegionService service, Options options) throws InterruptedException {
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
    AtomicInteger threads = new AtomicInteger();
    this.pool =
        new ThreadPoolExecutor(
            options.workers(),
            options.workers(),
            0,
            TimeUnit.MILLISECONDS,
            new ArrayBlockingQueue<>(options.queue()),
            task -> {
              Thread thread = new Thread(task, "kvs-tcp-worker-" + threads.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
    ServerBootstrap bootstrap =
        new ServerBootstrap()
            .group(bossGroup, ioGroup)
            .channel(NioServerSocketChannel.class)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel channel) {
                    channel
                        .pipeline()
                        .addLast(
                            new LengthFieldBasedFrameDecoder(
                                ByteOrder.LITTLE_ENDIAN, options.maxFrameBytes(), 0, 4, 0, 4, true),
                            new LengthFieldPrepender(ByteOrder.LITTLE_ENDIAN, 4, 0, false),
                            new RequestHandler());
                  }
                });
    this.serverChannel =
        bootstrap.bind(new InetSocketAddress(options.host(), options.port())).sync().channel();
  }

  /** Starts serving {@code service} on {@code options.host():options.port()}. */
  public static TcpFrontEnd start(RegionService service, Options options) {
    try {
      return new TcpFrontEnd(service, options);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while binding", e);
    }
  }

  /** The port it listens on. */
  public int port() {
    return ((InetSocketAddress) serverChannel.localAddress()).getPort();
  }

  /** Requests answered so far. */
  public long requests() {
    return requests.get();
  }

  /** Requests refused with OVERLOADED because the worker pool's queue was full. */
  public long overloaded() {
    return overloaded.get();
  }

  @Override
  public void close() {
    serverChannel.close().syncUninterruptibly();
    pool.shutdown();
    try {
      pool.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    ioGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    bossGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** OVERLOADED for the request in {@code request}, with its id and opcode if readable. */
  private static Reply overloadedReply(ByteBuf request) {
    int start = request.readerIndex();
    boolean header = request.readableBytes() >= WireCodec.REQUEST_HEADER_BYTES;
    Opcode opcode = header ? Opcode.fromCode(request.getUnsignedByte(start + 1)) : null;
    long id = header ? request.getLongLE(start + 8) : 0;
    return Reply.error(
        opcode == null ? Opcode.NOOP : opcode,
        StatusCode.OVERLOADED,
        id,
        "the server's request queue is full; retry later");
  }

  /** Hands each frame to the pool; replies are written back on the channel's event loop. */
  private final class RequestHandler extends SimpleChannelInboundHandler<ByteBuf> {
    private int inFlight; // event loop only

    @Override
    protected void channelRead0(ChannelHandlerContext context, ByteBuf frame) {
      ByteBuf request = frame.isDirect() ? frame.retain() : copyToDirect(frame);
      inFlight++;
      if (inFlight >= options.maxInFlightPerConnection()) {
        context.channel().config().setAutoRead(false);
      }
      try {
        pool.execute(() -> answer(context, request));
      } catch (RejectedExecutionException e) {
        overloaded.incrementAndGet();
        byte[] reply = WireCodec.encode(overloadedReply(request));
        request.release();
        finished(context, reply);
      }
    }

    private void answer(ChannelHandlerContext context, ByteBuf request) {
      byte[] reply;
      try {
        reply =
            service.handle(
                request.nioBuffer(request.readerIndex(), request.readableBytes()),
                0,
                request.readableBytes());
      } finally {
        request.release();
      }
      requests.incrementAndGet();
      context.executor().execute(() -> finished(context, reply));
    }

    private void finished(ChannelHandlerContext context, byte[] reply) {
      context.writeAndFlush(Unpooled.wrappedBuffer(reply));
      inFlight--;
      if (inFlight <= options.maxInFlightPerConnection() / 2
          && !context.channel().config().isAutoRead()) {
        context.channel().config().setAutoRead(true);
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext context, Throwable cause) {
      context.close(); // a broken or hostile peer: drop it, serve the others
    }

    private ByteBuf copyToDirect(ByteBuf frame) {
      ByteBuf direct = frame.alloc().directBuffer(frame.readableBytes());
      direct.writeBytes(frame, frame.readerIndex(), frame.readableBytes());
      return direct;
    }
  }
}
