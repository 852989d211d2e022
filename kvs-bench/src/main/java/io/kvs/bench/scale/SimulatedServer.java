package io.kvs.bench.scale;

import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlFraming;
import io.kvs.core.control.ControlGate;
import io.kvs.core.security.RefusalLog;
import io.kvs.server.control.ControlServer;
import io.kvs.server.membership.Membership;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One simulated region server: a ZooKeeper session of its own with the ephemeral node a real server
 * registers ({@link Membership}, the real class, through Curator as {@code RegionServer} builds
 * it), and a control port answering the control RPC with the real framing, gate and dispatch
 * ({@link ControlFraming}, {@link ControlGate} without a secret, {@link ControlServer#execute})
 * over {@link SimulatedRegions} instead of an engine. Its port is served by an event loop group
 * shared by every simulated server; commands run on it directly (a simulated command takes
 * microseconds, so there are no lanes to queue in).
 */
final class SimulatedServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SimulatedServer.class);
  private static final RefusalLog REFUSALS = new RefusalLog(LOG, "simulated control connection");

  private final String id;
  private final SimulatedRegions regions;
  private final Channel channel;
  private final CuratorFramework curator;
  private final Membership membership;
  private final ZooKeeperRelay relay;
  private volatile boolean alive = true;

  /**
   * Starts server {@code id}: its control port on {@code group} at {@code host}, registered in
   * ZooKeeper at {@code zookeeper} (through {@code relay} if given, so that it can be cut off)
   * under {@code paths} with a session of {@code sessionTimeout}.
   */
  SimulatedServer(
      String id,
      SimulatedCluster cluster,
      EventLoopGroup group,
      String host,
      String zookeeper,
      ZooKeeperRelay relay,
      ClusterPaths paths,
      Duration sessionTimeout)
      throws Exception {
    this.id = id;
    this.relay = relay;
    this.regions = new SimulatedRegions(id, cluster);
    this.channel =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel child) {
                    ControlFraming.addServerHandlers(
                        child.pipeline(), new ControlGate(Optional.empty(), REFUSALS));
                    child.pipeline().addLast(new Handler());
                  }
                })
            .bind(host, 0)
            .syncUninterruptibly()
            .channel();
    int port = ((InetSocketAddress) channel.localAddress()).getPort();
    curator =
        CuratorFrameworkFactory.builder()
            .connectString(relay != null ? relay.connectString() : zookeeper)
            .sessionTimeoutMs((int) sessionTimeout.toMillis())
            .connectionTimeoutMs(10_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 10, 2_000))
            .build();
    curator.start();
    // Ports a real server would serve: nobody connects to them here, the control port stands in.
    ServerInfo info = new ServerInfo(id, host, port, port, "stream", port, 0);
    membership = Membership.register(curator, paths, info, Duration.ofSeconds(60));
  }

  String id() {
    return id;
  }

  SimulatedRegions regions() {
    return regions;
  }

  boolean alive() {
    return alive;
  }

  /**
   * Dies as after {@code kill -9}: its control port closes (commands are refused) and, if it has a
   * relay, its ZooKeeper connection is cut, so its session expires after its timeout and its node
   * goes then; without one its session is closed now.
   */
  void kill() throws java.io.IOException {
    alive = false;
    channel.close().syncUninterruptibly();
    if (relay != null) {
      relay.cut();
    } else {
      membership.close();
      curator.close();
    }
  }

  @Override
  public void close() {
    boolean leaving = alive;
    alive = false;
    channel.close().syncUninterruptibly();
    try {
      if (leaving) {
        membership.close(); // a killed server's node went with its session (deleting it retries)
      }
    } catch (java.io.IOException | RuntimeException e) {
      LOG.debug("{}: leaving failed: {}", id, e.toString());
    }
    curator.close();
    if (relay != null) {
      relay.close();
    }
  }

  private final class Handler extends SimpleChannelInboundHandler<ControlCommand> {
    @Override
    protected void channelRead0(ChannelHandlerContext context, ControlCommand command) {
      if (!alive) {
        context.close(); // dead: no answer
        return;
      }
      context.writeAndFlush(ControlServer.execute(regions, command));
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext context, Throwable cause) {
      context.close();
    }
  }
}
