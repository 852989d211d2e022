package io.kvs.bench.scale;

import io.kvs.client.KvsClient;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.master.EmbeddedZooKeeper;
import io.kvs.tools.admin.AdminMain;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * One cluster size of the master-scale benchmark: ZooKeeper, {@code servers} simulated servers and
 * the master process; once every region is open and whole, the idle passes, the master's memory,
 * the client's map, the status page and {@code ./kvs admin regions} are measured, then one server
 * is killed (its session left to expire) and its regions' recovery is timed, with the passes that
 * ran meanwhile and what was written to ZooKeeper for it.
 */
final class ScaleRun {
  static final String CLUSTER = "scale";

  /** The server killed: the first, whose ZooKeeper connection goes through a relay. */
  static final String VICTIM = "s0001";

  private static final int REPLICATION = 2;
  private static final Duration CONVERGE_TIMEOUT = Duration.ofMinutes(10);
  private static final Duration RECOVERY_TIMEOUT = Duration.ofMinutes(5);
  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  /** What one size measured. */
  record Result(
      int regions,
      int servers,
      int victimHeld,
      double convergeSeconds,
      List<Double> idlePasses,
      long idleTransactions,
      long heapBytes,
      long residentBytes,
      double clientLoadMillis,
      double statusPageMillis,
      double statusJsonMillis,
      double adminRegionsMillis,
      double nodeGoneMillis,
      double recoveryMillis,
      List<Double> changePasses,
      long recoveryTransactions,
      long recoveryRegionWrites,
      int regionsChanged,
      double clientCaughtUpMillis) {}

  private final int regions;
  private final int servers;
  private final Duration sessionTimeout;
  private final Duration catchUp;
  private final Duration idle;
  private final Path directory;

  ScaleRun(
      int regions,
      int servers,
      Duration sessionTimeout,
      Duration catchUp,
      Duration idle,
      Path directory) {
    this.regions = regions;
    this.servers = servers;
    this.sessionTimeout = sessionTimeout;
    this.catchUp = catchUp;
    this.idle = idle;
    this.directory = directory;
  }

  Result run() throws Exception {
    say("starting ZooKeeper and %d simulated servers", servers);
    try (EmbeddedZooKeeper zookeeper =
            EmbeddedZooKeeper.start(directory.resolve("zookeeper"), "127.0.0.1", 0, null, 0);
        CuratorFramework curator =
            CuratorFrameworkFactory.newClient(
                zookeeper.connectString(), new ExponentialBackoffRetry(100, 5));
        SimulatedCluster cluster =
            SimulatedCluster.start(
                zookeeper.connectString(), CLUSTER, servers, 1, sessionTimeout, catchUp);
        MasterProcess master =
            MasterProcess.start(
                directory.resolve("master"),
                zookeeper.connectString(),
                CLUSTER,
                List.of(
                    "--regions", Integer.toString(regions),
                    "--servers", Integer.toString(servers),
                    "--replication", Integer.toString(REPLICATION),
                    "--mode", "send-index",
                    // simulated regions hold nothing: a fixed layout, no merges of empty ones
                    "--merge-size", "0"));
        PassWatch passes = new PassWatch(master)) {
      curator.start();
      String connect = zookeeper.connectString();
      ClusterView view = new ClusterView(curator, CLUSTER);
      master.awaitHttp(curator, CLUSTER, Duration.ofMinutes(1));
      say("master pid %d (log %s): bootstrapping %d regions", master.pid(), master.log(), regions);
      long began = System.nanoTime();
      Map<Long, ClusterView.Versioned> map =
          await(view, List.of(), cluster, CONVERGE_TIMEOUT, "every region open");
      double convergeSeconds = (System.nanoTime() - began) / 1e9;

      say("idle for %d s", idle.toSeconds());
      long idleFrom = System.nanoTime();
      long before = ZooKeeperTransactions.count(connect);
      LockSupport.parkNanos(idle.toNanos()); // a measuring window, not a wait for a condition
      long idleTransactions = ZooKeeperTransactions.count(connect) - before;
      List<Double> idlePasses = passes.between(idleFrom, System.nanoTime());

      long heap = master.heapAfterGc();
      long resident = master.residentBytes();

      long clientStarted = System.nanoTime();
      try (KvsClient client = KvsClient.builder().zookeeper(connect).cluster(CLUSTER).build()) {
        double clientLoad = millisSince(clientStarted);
        if (client.regionMap().size() != regions) {
          throw new IllegalStateException("the client's map has " + client.regionMap().size());
        }
        long statusStarted = System.nanoTime();
        master.get("/status", Duration.ofMinutes(1));
        double statusPage = millisSince(statusStarted);
        statusStarted = System.nanoTime();
        master.get("/api/status", Duration.ofMinutes(1));
        double statusJson = millisSince(statusStarted);
        double adminRegions = adminRegions(connect);

        int victimHeld = cluster.held(VICTIM);
        int changed =
            (int)
                map.values().stream()
                    .map(ClusterView.Versioned::region)
                    .filter(region -> region.members().contains(VICTIM))
                    .count();
        long writesBefore = ClusterView.writes(map);
        long transactionsBefore = ZooKeeperTransactions.count(connect);
        say("killing %s, which holds %d regions", VICTIM, victimHeld);
        long killed = System.nanoTime();
        cluster.kill(VICTIM);
        String node = new ClusterPaths(CLUSTER).server(VICTIM);
        await(() -> curator.checkExists().forPath(node) == null, RECOVERY_TIMEOUT, "node gone");
        double nodeGone = millisSince(killed);
        cluster.bury(VICTIM);
        map = await(view, List.of(VICTIM), cluster, RECOVERY_TIMEOUT, "its regions recovered");
        long recovered = System.nanoTime();
        long recoveryTransactions = ZooKeeperTransactions.count(connect) - transactionsBefore;
        long recoveryWrites = ClusterView.writes(map) - writesBefore;
        Map<Long, ClusterView.Versioned> settled = map;
        await(() -> sameEpochs(client.regionMap().regions(), settled), RECOVERY_TIMEOUT, "map");
        double clientCaughtUp = millisSince(recovered);
        return new Result(
            regions,
            servers,
            victimHeld,
            convergeSeconds,
            idlePasses,
            idleTransactions,
            heap,
            resident,
            clientLoad,
            statusPage,
            statusJson,
            adminRegions,
            nodeGone,
            (recovered - killed) / 1e6,
            passes.between(killed, recovered),
            recoveryTransactions,
            recoveryWrites,
            changed,
            clientCaughtUp);
      }
    }
  }

  /** {@code ./kvs admin regions} as the tool runs it, its output discarded; milliseconds. */
  private static double adminRegions(String zookeeper) {
    StringWriter errors = new StringWriter();
    long started = System.nanoTime();
    int status =
        AdminMain.run(
            new String[] {"--zookeeper", zookeeper, "--cluster", CLUSTER, "regions"},
            new PrintWriter(Writer.nullWriter()),
            new PrintWriter(errors));
    double millis = millisSince(started);
    if (status != 0) {
      throw new IllegalStateException("admin regions failed: " + errors);
    }
    return millis;
  }

  /** Whether {@code client}'s map has every region of {@code settled} at its epoch. */
  private static boolean sameEpochs(
      List<RegionDescriptor> client, Map<Long, ClusterView.Versioned> settled) {
    if (client.size() != settled.size()) {
      return false;
    }
    for (RegionDescriptor region : client) {
      ClusterView.Versioned known = settled.get(region.id());
      if (known == null || known.region().epoch() != region.epoch()) {
        return false;
      }
    }
    return true;
  }

  private static Map<Long, ClusterView.Versioned> await(
      ClusterView view, List<String> dead, SimulatedCluster cluster, Duration bound, String what)
      throws Exception {
    long deadline = System.nanoTime() + bound.toNanos();
    while (true) {
      Map<Long, ClusterView.Versioned> map = view.regions();
      if (ClusterView.settled(map, REPLICATION, dead, cluster)) {
        return map;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("not reached within " + bound + ": " + what);
      }
      LockSupport.parkNanos(POLL_NANOS);
    }
  }

  /** A condition that may throw. */
  private interface Check {
    boolean holds() throws Exception;
  }

  private static void await(Check check, Duration bound, String what) throws Exception {
    long deadline = System.nanoTime() + bound.toNanos();
    while (!check.holds()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("not reached within " + bound + ": " + what);
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
    }
  }

  private static double millisSince(long started) {
    return (System.nanoTime() - started) / 1e6;
  }

  private void say(String format, Object... arguments) {
    System.out.printf(
        "[%d regions / %d servers] %s%n", regions, servers, String.format(format, arguments));
  }
}
