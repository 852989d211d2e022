package io.kvs.bench.scale;

import io.kvs.core.cluster.ClusterPaths;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Many simulated region servers ({@link SimulatedServer}) in this process, registered in one
 * cluster's ZooKeeper: what a master sees of hundreds of servers, without their engines. They share
 * one event loop group for their control ports, and know each other (a primary reports a backup in
 * sync once that backup holds the region). Server ids are {@code s0001}, {@code s0002}, ...: the
 * first {@code cuttable} connect to ZooKeeper through a {@link ZooKeeperRelay}, so that killing
 * them lets their sessions expire as after a crash.
 */
public final class SimulatedCluster implements AutoCloseable {
  /** Threads registering servers at once: each waits for its session and its node. */
  private static final int STARTERS = 8;

  private final EventLoopGroup group;
  private final Map<String, SimulatedServer> servers = new ConcurrentHashMap<>();
  private final Duration catchUp;

  private SimulatedCluster(int threads, Duration catchUp) {
    this.group = new MultiThreadIoEventLoopGroup(threads, NioIoHandler.newFactory());
    this.catchUp = catchUp;
  }

  /**
   * Starts {@code count} servers of cluster {@code cluster} in ZooKeeper at {@code zookeeper}, each
   * with a session of {@code sessionTimeout}; the first {@code cuttable} through relays. A joining
   * backup is reported in sync by its primary {@code catchUp} after both opened the region. Returns
   * once every server has registered.
   */
  public static SimulatedCluster start(
      String zookeeper,
      String cluster,
      int count,
      int cuttable,
      Duration sessionTimeout,
      Duration catchUp)
      throws Exception {
    SimulatedCluster simulated = new SimulatedCluster(2, catchUp);
    ClusterPaths paths = new ClusterPaths(cluster);
    ExecutorService starters = Executors.newFixedThreadPool(STARTERS);
    try {
      List<Future<SimulatedServer>> started = new ArrayList<>();
      for (int i = 1; i <= count; i++) {
        String id = String.format("s%04d", i);
        boolean relayed = i <= cuttable;
        started.add(
            starters.submit(
                () ->
                    new SimulatedServer(
                        id,
                        simulated,
                        simulated.group,
                        "127.0.0.1",
                        zookeeper,
                        relayed ? new ZooKeeperRelay(zookeeper) : null,
                        paths,
                        sessionTimeout)));
      }
      for (Future<SimulatedServer> server : started) {
        SimulatedServer done = server.get(2, TimeUnit.MINUTES);
        simulated.servers.put(done.id(), done);
      }
    } catch (Exception e) {
      simulated.close();
      throw e;
    } finally {
      starters.shutdownNow();
    }
    return simulated;
  }

  /** Server {@code id}, or null. */
  SimulatedServer server(String id) {
    return servers.get(id);
  }

  /** How long a joining backup takes to catch up. */
  Duration catchUp() {
    return catchUp;
  }

  /** The ids of the servers alive now. */
  public List<String> alive() {
    return servers.values().stream()
        .filter(SimulatedServer::alive)
        .map(SimulatedServer::id)
        .toList();
  }

  /** How many regions server {@code id} holds now. */
  public int held(String id) {
    return servers.get(id).regions().size();
  }

  /** The live server {@code which} accepts holding the most regions, or null. */
  public String busiest(Predicate<String> which) {
    String busiest = null;
    for (SimulatedServer server : servers.values()) {
      if (server.alive()
          && which.test(server.id())
          && (busiest == null || server.regions().size() > held(busiest))) {
        busiest = server.id();
      }
    }
    return busiest;
  }

  /** Kills server {@code id} as after {@code kill -9} ({@link SimulatedServer#kill}). */
  public void kill(String id) throws java.io.IOException {
    servers.get(id).kill();
  }

  /**
   * Stops what is left of killed server {@code id} once its session expired: its ZooKeeper client,
   * which would otherwise try to reconnect for ever.
   */
  public void bury(String id) {
    closeQuietly(servers.get(id));
  }

  @Override
  public void close() {
    servers.values().parallelStream().forEach(SimulatedCluster::closeQuietly);
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  private static void closeQuietly(SimulatedServer server) {
    try {
      server.close();
    } catch (Exception e) {
      // stopping anyway
    }
  }
}
