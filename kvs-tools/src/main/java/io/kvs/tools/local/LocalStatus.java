package io.kvs.tools.local;

import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.cluster.ZooKeeperReads;
import io.kvs.core.control.HeldRegion;
import io.kvs.master.status.RegionHealth;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.KeeperException;

/**
 * Prints a local cluster: processes, servers, masters, where their status page and metrics are
 * served, and every region with its group and its health as its members report it (control {@code
 * list}: a region the map says is open but a member does not hold is reported as not served).
 */
public final class LocalStatus {
  private final ClusterDirectory directory;

  LocalStatus(ClusterDirectory directory) {
    this.directory = directory;
  }

  /** Prints the status; 0 if every region is open, 1 otherwise. */
  int run() throws Exception {
    Map<String, String> state = directory.load();
    if (state.getOrDefault("zookeeper", "").isEmpty()) {
      System.out.println("no local cluster in " + directory.root() + " (./kvs local start)");
      return 1;
    }
    System.out.println("cluster directory " + directory.root());
    state.forEach(
        (key, pid) -> {
          if (key.startsWith("pid.")) {
            boolean up = ClusterDirectory.running(pid).isPresent();
            System.out.printf(
                "  %-14s pid %-8s %s%n", key.substring(4), pid, up ? "running" : "stopped");
          }
        });
    if (ClusterDirectory.running(state.get("pid.zookeeper")).isEmpty()) {
      System.out.println("ZooKeeper is not running: nothing more to show");
      return 1;
    }
    try (CuratorFramework curator = connect(state.get("zookeeper"))) {
      ClusterPaths paths = new ClusterPaths(state.get("cluster"));
      Map<String, ServerInfo> servers = servers(curator, paths);
      RegionMap map = regions(curator, paths);
      System.out.printf("%nservers (%d live)%n", servers.size());
      for (ServerInfo server : servers.values()) {
        long primaries =
            map.regions().stream().filter(r -> r.primary().equals(server.id())).count();
        long backups =
            map.regions().stream().filter(r -> r.backups().contains(server.id())).count();
        System.out.printf(
            "  %-4s tcp %s:%d  fabric %s  control %d  http %d  primary of %d, backup of %d%n",
            server.id(),
            server.host(),
            server.tcpPort(),
            server.hasFabric() ? server.fabricProvider() + ":" + server.fabricPort() : "-",
            server.controlPort(),
            server.httpPort(),
            primaries,
            backups);
      }
      List<String> masters = masterIds(curator, paths);
      System.out.printf("masters: %s%n", describe(masters));
      OperatorAddresses.print(curator, paths, servers, masters.isEmpty() ? "" : masters.get(0));
      System.out.printf("%nregions (%d)%n", map.size());
      int replication = replicationFactor(curator, paths);
      Map<String, Map<Long, HeldRegion>> held =
          ServedRegions.held(servers, directory.toolSecurity());
      System.out.printf(
          "  %-4s %-24s %-8s %-10s %-6s %-8s %s%n",
          "id", "range", "primary", "backups", "epoch", "state", "health");
      int open = 0;
      List<String> notServed = new ArrayList<>();
      for (RegionDescriptor region : map.regions()) {
        RegionHealth health = RegionHealth.of(region, held, replication);
        System.out.printf(
            "  %-4d %-24s %-8s %-10s %-6d %-8s %s%n",
            region.id(),
            region.rangeText(),
            region.primary(),
            String.join(",", region.backups()),
            region.epoch(),
            region.state(),
            health.health() + (health.detail().isEmpty() ? "" : " (" + health.detail() + ")"));
        boolean served = ServedRegions.served(health);
        open += region.state() == RegionState.OPEN && served ? 1 : 0;
        if (region.state() == RegionState.OPEN && !served) {
          notServed.add("region " + region.id() + ": " + health.detail());
        }
      }
      // "Open" means served as the map says, not the map's word alone: a member may have lost or
      // closed the region (its map state still OPEN) until the master notices.
      System.out.printf("%n%d of %d regions open and served%n", open, map.size());
      notServed.forEach(line -> System.out.printf("  not served as the map says: %s%n", line));
      return open == map.size() && map.size() > 0 ? 0 : 1;
    }
  }

  private static int replicationFactor(CuratorFramework curator, ClusterPaths paths)
      throws Exception {
    try {
      return ClusterJson.decodeConfig(curator.getData().forPath(paths.config()))
          .replicationFactor();
    } catch (KeeperException.NoNodeException e) {
      return 1;
    }
  }

  /** Waits until the region map exists and every region is open. */
  void awaitOpen(Duration timeout) throws Exception {
    Map<String, String> state = directory.load();
    long deadline = System.nanoTime() + timeout.toNanos();
    try (CuratorFramework curator = connect(state.get("zookeeper"))) {
      ClusterPaths paths = new ClusterPaths(state.get("cluster"));
      while (true) {
        RegionMap map = regions(curator, paths);
        if (map.size() > 0 && map.regions().stream().allMatch(r -> r.state() == RegionState.OPEN)) {
          return;
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "regions not all open within " + timeout + "; see " + directory.logs());
        }
        failIfExited(state);
        Thread.sleep(100); // the master's progress shows only in ZooKeeper: poll it
      }
    }
  }

  /** A process that exited while the cluster starts will not open its regions: say so now. */
  private void failIfExited(Map<String, String> state) throws IOException {
    for (Map.Entry<String, String> entry : state.entrySet()) {
      if (entry.getKey().startsWith("pid.")
          && ClusterDirectory.running(entry.getValue()).isEmpty()) {
        String name = entry.getKey().substring(4);
        Path log = directory.logs().resolve(name + ".log");
        List<String> lines = Files.exists(log) ? Files.readAllLines(log) : List.of();
        throw new IllegalStateException(
            name
                + " exited while the cluster was starting; the end of "
                + log
                + ":\n  "
                + String.join("\n  ", lines.subList(Math.max(0, lines.size() - 5), lines.size())));
      }
    }
  }

  /**
   * The live region servers of cluster {@code cluster} whose ZooKeeper is {@code zookeeper} (as a
   * local cluster's {@code cluster.properties} names them), by id: for tools and benchmarks.
   */
  public static Map<String, ServerInfo> liveServers(String zookeeper, String cluster)
      throws Exception {
    try (CuratorFramework curator = connect(zookeeper)) {
      return servers(curator, new ClusterPaths(cluster));
    }
  }

  static CuratorFramework connect(String zookeeper) throws InterruptedException {
    CuratorFramework curator =
        CuratorFrameworkFactory.newClient(zookeeper, 10_000, 5_000, new RetryOneTime(200));
    curator.start();
    if (!curator.blockUntilConnected(10, java.util.concurrent.TimeUnit.SECONDS)) {
      curator.close();
      throw new IllegalStateException("cannot reach ZooKeeper at " + zookeeper);
    }
    return curator;
  }

  static Map<String, ServerInfo> servers(CuratorFramework curator, ClusterPaths paths)
      throws Exception {
    Map<String, ServerInfo> servers = new TreeMap<>();
    for (String child : children(curator, paths.servers())) {
      try {
        ServerInfo info = ClusterJson.decodeServer(curator.getData().forPath(paths.server(child)));
        servers.put(info.id(), info);
      } catch (KeeperException.NoNodeException e) {
        // gone meanwhile
      }
    }
    return servers;
  }

  static RegionMap regions(CuratorFramework curator, ClusterPaths paths) throws Exception {
    List<RegionDescriptor> regions = new ArrayList<>();
    // A region split or merged meanwhile is skipped: its successors are listed, or are on the
    // next look.
    ZooKeeperReads.readAll(
        curator,
        paths.regions(),
        children(curator, paths.regions()),
        (data, stat) -> regions.add(ClusterJson.decodeRegion(data)));
    return RegionMap.of(regions);
  }

  private static String describe(List<String> masterIds) {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < masterIds.size(); i++) {
      names.add(masterIds.get(i) + (i == 0 ? " (active)" : " (standby)"));
    }
    return names.isEmpty() ? "none" : String.join(", ", names);
  }

  /** The masters' ids in election order: the first is the active one. */
  private static List<String> masterIds(CuratorFramework curator, ClusterPaths paths)
      throws Exception {
    List<String> children = new ArrayList<>(children(curator, paths.masters()));
    // LeaderLatch participants: the lowest sequence number leads.
    children.sort(
        (a, b) ->
            a.substring(a.lastIndexOf('-') + 1).compareTo(b.substring(b.lastIndexOf('-') + 1)));
    List<String> names = new ArrayList<>();
    for (int i = 0; i < children.size(); i++) {
      try {
        String id =
            new String(
                curator.getData().forPath(paths.masters() + "/" + children.get(i)),
                java.nio.charset.StandardCharsets.UTF_8);
        names.add(id);
      } catch (KeeperException.NoNodeException e) {
        // gone meanwhile
      }
    }
    return names;
  }

  private static List<String> children(CuratorFramework curator, String path) throws Exception {
    try {
      return curator.getChildren().forPath(path);
    } catch (KeeperException.NoNodeException e) {
      return List.of();
    }
  }
}
