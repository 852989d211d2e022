package io.kvs.server.control;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlFraming;
import io.kvs.core.control.ControlGate;
import io.kvs.core.control.ControlReply;
import io.kvs.core.security.RefusalLog;
import io.kvs.core.security.SecurityOptions;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.SslContext;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The region server's end of the control RPC: commands from the master, executed off the event loop
 * (opening a region may replay its logs), each answered with a {@link ControlReply}. Commands run
 * in lanes, each one thread with a bounded queue, so a slow command holds up only its own kind:
 *
 * <ul>
 *   <li>{@code open} and {@code close}, in {@link #CHANGE_LANES} lanes by region ({@code
 *       kvs-control-N}): one region's commands one at a time in the order they came, different
 *       regions' side by side (a server handed every region of a dead peer promotes them at once,
 *       not one after another);
 *   <li>{@code list}, {@code stats} and {@code regionStats}, which read published state and never
 *       wait for an open or a close ({@code kvs-control-read}): the master's 1 s bound on {@code
 *       list} holds while a region replays a long log;
 *   <li>{@code digest}, which may scan a whole region ({@code kvs-control-digest});
 *   <li>{@code prepareHandover}, which waits for a region's merge ({@code kvs-control-merge}).
 * </ul>
 *
 * A command finding its lane's queue full is not run: it is answered {@code OVERLOADED} at once
 * (the master sends it again on a later pass; tools report it). A malformed frame closes that
 * connection only. With a cluster secret, a command runs only if its connection proved the secret
 * ({@link ControlGate}); with TLS, only peers presenting a certificate signed by the cluster CA
 * connect at all. With neither, anyone who reaches the port can close every region: the server says
 * so loudly at start.
 */
public final class ControlServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ControlServer.class);

  /**
   * Opens and closes waiting at most: the master keeps at most two in flight to a server
   * (docs/ARCHITECTURE.md "The master's rules"), so only several masters or tools at once reach it.
   */
  static final int CHANGES_WAITING_MAX = 64;

  /**
   * Lanes for opens and closes: enough to overlap promotions' device waits and log replays on a few
   * cores; a region always goes to the same lane.
   */
  static final int CHANGE_LANES = 4;

  /** Lists and stats waiting at most: the master and each status page ask once per pass. */
  static final int READS_WAITING_MAX = 64;

  /**
   * Digests waiting at most: each may scan a region; {@code ./kvs local verify} asks one by one.
   */
  static final int DIGESTS_WAITING_MAX = 4;

  /**
   * Handovers' preparations waiting at most: the master prepares at most its balancer's moves in
   * flight at once.
   */
  static final int MERGES_WAITING_MAX = 16;

  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final List<ThreadPoolExecutor> changes = changeLanes();
  private final ThreadPoolExecutor reads = lane("kvs-control-read", READS_WAITING_MAX);
  private final ThreadPoolExecutor digests = lane("kvs-control-digest", DIGESTS_WAITING_MAX);
  private final ThreadPoolExecutor merges = lane("kvs-control-merge", MERGES_WAITING_MAX);
  private final AtomicLong overloaded = new AtomicLong();
  private final ControlledRegions regions;
  private final RefusalLog refusals = new RefusalLog(LOG, "control connection");
  private final Channel channel;

  private ControlServer(
      ControlledRegions regions, String host, int port, SecurityOptions security) {
    this.regions = regions;
    Optional<SslContext> tls = security.tls().map(options -> options.serverContext(true));
    this.channel =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel child) {
                    tls.ifPresent(
                        context -> child.pipeline().addLast(context.newHandler(child.alloc())));
                    ControlFraming.addServerHandlers(
                        child.pipeline(), new ControlGate(security.secret(), refusals));
                    child.pipeline().addLast(new Handler());
                  }
                })
            .bind(host, port)
            .syncUninterruptibly()
            .channel();
  }

  /**
   * Listens on {@code host:port} (0: a free port), accepting commands from anyone: tests of servers
   * without security only.
   */
  public static ControlServer start(ControlledRegions regions, String host, int port) {
    return start(regions, host, port, SecurityOptions.none());
  }

  /**
   * Listens on {@code host:port} (0: a free port), authenticating peers as {@code security} says.
   */
  public static ControlServer start(
      ControlledRegions regions, String host, int port, SecurityOptions security) {
    if (!security.authenticatesControl()) {
      LOG.warn(
          "SECURITY: the control port on {} accepts commands from ANYONE who can reach it (anyone"
              + " can close or open regions): start the server with --secret-file (and TLS),"
              + " see docs/OPERATIONS.md, Security",
          host);
    }
    return new ControlServer(regions, host, port, security);
  }

  /** Commands answered OVERLOADED so far: their lane's queue was full. */
  public long overloaded() {
    return overloaded.get();
  }

  /** Connections refused for lack of authentication so far. */
  public long refusals() {
    return refusals.refusals();
  }

  public int port() {
    return ((InetSocketAddress) channel.localAddress()).getPort();
  }

  /** Executes {@code command} (what a connection's frame asks for). */
  ControlReply execute(ControlCommand command) {
    return execute(regions, command);
  }

  /**
   * The reply of a server holding {@code regions} to {@code command}: what its control port answers
   * (also what the master-scale benchmark's simulated servers answer).
   */
  public static ControlReply execute(ControlledRegions regions, ControlCommand command) {
    try {
      if (command instanceof ControlCommand.Open open) {
        regions.open(
            open.region(), open.mode(), open.minReplicas(), open.streamKey(), open.backups());
        return ControlReply.ok();
      }
      if (command instanceof ControlCommand.Close close) {
        regions.close(close.regionId(), close.epoch());
        return ControlReply.ok();
      }
      if (command instanceof ControlCommand.Seal seal) {
        byte[] key = regions.seal(seal.regionId(), seal.epoch(), seal.key(), seal.byLoad());
        return new ControlReply(
            StatusCode.OK, java.util.Base64.getEncoder().encodeToString(key), List.of());
      }
      if (command instanceof ControlCommand.Retire retire) {
        regions.retire(retire.regionId(), retire.epoch());
        return ControlReply.ok();
      }
      if (command instanceof ControlCommand.PrepareHandover prepare) {
        return new ControlReply(
            StatusCode.OK,
            "",
            List.of(),
            regions.prepareHandover(prepare.regionId(), prepare.epoch()));
      }
      if (command instanceof ControlCommand.Stats) {
        return new ControlReply(StatusCode.OK, "", List.of(), regions.stats());
      }
      if (command instanceof ControlCommand.RegionStats regionStats) {
        return new ControlReply(
            StatusCode.OK, "", List.of(), regions.regionStats(regionStats.regionId()));
      }
      if (command instanceof ControlCommand.Digest digest) {
        return new ControlReply(StatusCode.OK, "", List.of(), regions.digest(digest.regionId()));
      }
      return new ControlReply(StatusCode.OK, "", regions.list());
    } catch (KvsException e) {
      long regionId =
          command instanceof ControlCommand.Open open
              ? open.region().id()
              : command instanceof ControlCommand.Close close
                  ? close.regionId()
                  : command instanceof ControlCommand.Seal seal
                      ? seal.regionId()
                      : command instanceof ControlCommand.Retire retire
                          ? retire.regionId()
                          : command instanceof ControlCommand.PrepareHandover prepare
                              ? prepare.regionId()
                              : -1;
      if (e instanceof NotInSyncException) {
        // Not a backup in sync: the master opens the region again with this server joining.
        return new ControlReply(
            e.status(), e.getMessage(), List.of(), Map.of(ControlReply.REJOIN, 1L));
      }
      if (e.status() == StatusCode.STALE_EPOCH && regionId >= 0) {
        // The epoch this server is at, so the master can move past it.
        return new ControlReply(
            e.status(),
            e.getMessage(),
            List.of(),
            Map.of(ControlReply.EPOCH, regions.highestEpoch(regionId)));
      }
      return ControlReply.failed(e.status(), e.getMessage());
    } catch (RuntimeException e) {
      LOG.error("control command {} failed", command, e);
      return ControlReply.failed(StatusCode.INTERNAL, String.valueOf(e.getMessage()));
    }
  }

  private final class Handler extends SimpleChannelInboundHandler<ControlCommand> {
    @Override
    protected void channelRead0(ChannelHandlerContext context, ControlCommand command) {
      ThreadPoolExecutor lane = laneOf(command);
      try {
        lane.execute(() -> context.writeAndFlush(execute(command)));
      } catch (RejectedExecutionException e) {
        overloaded.incrementAndGet();
        context.writeAndFlush(
            ControlReply.failed(
                StatusCode.OVERLOADED,
                "control server busy: "
                    + lane.getQueue().size()
                    + " commands of this kind already wait; retry later"));
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext context, Throwable cause) {
      LOG.warn(
          "closing control connection from {}: {}",
          context.channel().remoteAddress(),
          cause.toString());
      if (cause instanceof DecoderException
          && cause.getCause() instanceof IllegalArgumentException malformed) {
        // A command this server cannot read (malformed, or of another control protocol
        // version): its sender learns why before the connection closes.
        context
            .writeAndFlush(
                ControlReply.failed(
                    StatusCode.INVALID_ARGUMENT, "malformed command: " + malformed.getMessage()))
            .addListener(ChannelFutureListener.CLOSE);
        return;
      }
      context.close();
    }
  }

  /** The lane {@code command} runs in. */
  private ThreadPoolExecutor laneOf(ControlCommand command) {
    if (command instanceof ControlCommand.Open open) {
      return changes.get(Math.floorMod(open.region().id(), CHANGE_LANES));
    }
    if (command instanceof ControlCommand.Close close) {
      return changes.get(Math.floorMod(close.regionId(), CHANGE_LANES));
    }
    if (command instanceof ControlCommand.Seal seal) {
      return changes.get(Math.floorMod(seal.regionId(), CHANGE_LANES));
    }
    if (command instanceof ControlCommand.Retire retire) {
      return changes.get(Math.floorMod(retire.regionId(), CHANGE_LANES));
    }
    if (command instanceof ControlCommand.PrepareHandover) {
      return merges;
    }
    return command instanceof ControlCommand.Digest ? digests : reads;
  }

  private static List<ThreadPoolExecutor> changeLanes() {
    List<ThreadPoolExecutor> lanes = new ArrayList<>();
    for (int i = 0; i < CHANGE_LANES; i++) {
      lanes.add(lane("kvs-control-" + i, CHANGES_WAITING_MAX));
    }
    return List.copyOf(lanes);
  }

  /** One thread taking commands from a queue of at most {@code waiting}; rejects beyond it. */
  private static ThreadPoolExecutor lane(String name, int waiting) {
    return new ThreadPoolExecutor(
        1,
        1,
        0,
        TimeUnit.MILLISECONDS,
        new ArrayBlockingQueue<>(waiting),
        runnable -> {
          Thread thread = new Thread(runnable, name);
          thread.setDaemon(true);
          return thread;
        },
        new ThreadPoolExecutor.AbortPolicy());
  }

  @Override
  public void close() {
    channel.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    List<ThreadPoolExecutor> lanes = new ArrayList<>(changes);
    lanes.add(reads);
    lanes.add(digests);
    lanes.add(merges);
    lanes.forEach(ThreadPoolExecutor::shutdown);
    try {
      for (ThreadPoolExecutor lane : lanes) {
        lane.awaitTermination(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
