package io.kvs.bench.chaos;

import io.kvs.client.KvsClient;
import io.kvs.client.Transport;
import io.kvs.core.cli.Processes;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.security.SecurityOptions;
import io.kvs.tools.ClusterTarget;
import io.kvs.tools.Directories;
import io.kvs.tools.LaunchedCluster;
import io.kvs.tools.admin.Admin;
import io.kvs.tools.fault.LoopDisk;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.KeeperException;

/**
 * The campaign's cluster: ZooKeeper, masters and region servers as separate processes ({@link
 * LaunchedCluster}, i.e. {@code ./kvs local start}), every server's directory on a small file
 * system of its own ({@link LoopDisk}, so that it can be made full), and the campaign's hands on
 * it: killing, pausing and restarting processes (with the {@link CrashWatch} told first), reading
 * the region map and the election from ZooKeeper, and an admin session. {@link #close()} stops
 * every process, then unmounts the disks.
 */
final class ChaosCluster implements AutoCloseable {
  private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(30);

  private final Layout layout;
  private final LaunchedCluster launched;
  private final Map<String, LoopDisk> disks;
  private final String zookeeper;
  private final ClusterPaths paths = new ClusterPaths("default");
  private final CuratorFramework curator;
  private final Admin admin;
  private final CrashWatch watch = new CrashWatch();
  private boolean closed;

  /** What the cluster is made of. */
  record Layout(
      Path dir,
      Path disksDir,
      Path zookeeperLogDir,
      long diskBytes,
      List<String> servers,
      List<String> masters,
      int regions,
      int replication,
      List<String> startOptions) {}

  private ChaosCluster(
      Layout layout, LaunchedCluster launched, Map<String, LoopDisk> disks, String zookeeper)
      throws Exception {
    this.layout = layout;
    this.launched = launched;
    this.disks = disks;
    this.zookeeper = zookeeper;
    this.curator =
        CuratorFrameworkFactory.newClient(zookeeper, 30_000, 10_000, new RetryOneTime(200));
    curator.start();
    if (!curator.blockUntilConnected(30, java.util.concurrent.TimeUnit.SECONDS)) {
      throw new IllegalStateException("cannot reach ZooKeeper at " + zookeeper);
    }
    this.admin =
        Admin.connect(
            new ClusterTarget(zookeeper, "default"),
            security(layout.dir()),
            Duration.ofSeconds(30));
    for (String name : processNames()) {
      watch.up(name, process(name).pid());
    }
    watch.start();
  }

  /**
   * Starts the cluster: stops one left running in {@code layout.dir()} by an earlier run, makes a
   * loop disk per server (undoing disks an earlier run left), then starts every process and waits
   * until every region is open. A start that fails undoes what it did.
   */
  static ChaosCluster start(Layout layout, Runnable onInterrupt) throws Exception {
    Map<String, LoopDisk> disks = new LinkedHashMap<>();
    LaunchedCluster launched = null;
    try {
      launched =
          LaunchedCluster.start(
              layout.dir(),
              layout.startOptions(),
              onInterrupt,
              root -> {
                // An earlier run's log would be replayed into this run's new ZooKeeper.
                Directories.deleteRecursively(layout.zookeeperLogDir());
                makeDisks(layout, root, disks);
              });
      String zookeeper = launched.connect()[0];
      return new ChaosCluster(layout, launched, disks, zookeeper);
    } catch (Exception | Error e) {
      try {
        if (launched != null) {
          launched.close();
        }
      } finally {
        closeDisks(disks.values());
      }
      throw e;
    }
  }

  /** A loop disk per server under {@code disksDir}, mounted where the server's directory links. */
  private static void makeDisks(Layout layout, Path root, Map<String, LoopDisk> disks)
      throws IOException {
    Path disksDir = layout.disksDir().toAbsolutePath().normalize();
    for (String undone : LoopDisk.cleanLeftovers(disksDir)) {
      System.out.println("left by an earlier run: " + undone);
    }
    Directories.deleteRecursively(disksDir);
    Files.createDirectories(root.resolve("servers"));
    for (String server : layout.servers()) {
      LoopDisk disk =
          LoopDisk.create(
              disksDir.resolve(server + ".img"), disksDir.resolve(server), layout.diskBytes());
      disks.put(server, disk);
      Files.createSymbolicLink(root.resolve("servers").resolve(server), disk.mountPoint());
    }
  }

  Layout layout() {
    return layout;
  }

  String zookeeper() {
    return zookeeper;
  }

  CrashWatch watch() {
    return watch;
  }

  /** The ZooKeeper client port. */
  int zookeeperPort() {
    return Integer.parseInt(zookeeper.substring(zookeeper.lastIndexOf(':') + 1));
  }

  /** Every process by its name in the cluster directory: zookeeper, masters, servers. */
  List<String> processNames() {
    List<String> names = new ArrayList<>(List.of("zookeeper"));
    layout.masters().forEach(id -> names.add("master-" + id));
    layout.servers().forEach(id -> names.add("server-" + id));
    return names;
  }

  /** The process named {@code name} ({@code server-s1}), which must run. */
  ProcessHandle process(String name) throws IOException {
    return launched
        .process(name)
        .orElseThrow(() -> new IllegalStateException(name + " is not running"));
  }

  /** Whether {@code name} runs. */
  boolean running(String name) throws IOException {
    return launched.process(name).map(Processes::running).orElse(false);
  }

  /** SIGKILLs {@code name} and waits until it is gone. */
  void kill(String name) throws IOException {
    ProcessHandle process = process(name);
    watch.down(name);
    process.destroyForcibly();
    if (!Processes.awaitExit(process, EXIT_TIMEOUT)) {
      throw new IllegalStateException(name + " still runs " + EXIT_TIMEOUT + " after SIGKILL");
    }
  }

  /** Starts {@code name} again with its command line ({@code ./kvs local restart}). */
  void restart(String name) throws IOException, InterruptedException {
    watch.down(name);
    launched.run("restart", name.substring(name.indexOf('-') + 1));
    watch.up(name, process(name).pid());
  }

  /** The loop disk of server {@code id}. */
  LoopDisk disk(String id) {
    LoopDisk disk = disks.get(id);
    if (disk == null) {
      throw new IllegalArgumentException("no disk of " + id);
    }
    return disk;
  }

  /** The region map as ZooKeeper holds it now. */
  RegionMap regions() throws Exception {
    return admin.regions();
  }

  /** Region {@code id}. */
  /**
   * The region at position {@code position} in key order (counting from 1, wrapping around): how
   * the schedule names regions, since splits and merges retire ids. Before any split or merge it is
   * region {@code position} (the bootstrap numbers regions in key order).
   */
  RegionDescriptor region(long position) throws Exception {
    List<RegionDescriptor> inOrder = regions().regions();
    if (inOrder.isEmpty()) {
      throw new IllegalStateException("no region in the map");
    }
    return inOrder.get((int) Math.floorMod(position - 1, (long) inOrder.size()));
  }

  /** The live servers by id. */
  Map<String, ServerInfo> servers() throws Exception {
    return admin.servers();
  }

  /** The admin session (one thread at a time: the campaign's). */
  Admin admin() {
    return admin;
  }

  /** A new admin session, for a thread of its own. */
  Admin newAdmin() throws InterruptedException {
    return Admin.connect(
        new ClusterTarget(zookeeper, "default"), security(layout.dir()), Duration.ofSeconds(30));
  }

  /** A client of the cluster with {@code operationTimeout}, for the campaign's own writes. */
  KvsClient client(Duration operationTimeout) {
    return KvsClient.builder()
        .zookeeper(zookeeper)
        .cluster("default")
        .transport(Transport.TCP)
        .operationTimeout(operationTimeout)
        .security(clientSecurity())
        .build();
  }

  /** What the campaign's clients prove: the cluster's client secret (never the cluster secret). */
  SecurityOptions clientSecurity() {
    return SecurityOptions.forClusterDirectory(layout.dir().toAbsolutePath().normalize(), "client");
  }

  /** The masters' ids in election order: the first leads. */
  List<String> election() throws Exception {
    List<String> children = new ArrayList<>();
    try {
      children.addAll(curator.getChildren().forPath(paths.masters()));
    } catch (KeeperException.NoNodeException e) {
      return List.of();
    }
    children.sort(Comparator.comparing(child -> child.substring(child.lastIndexOf('-') + 1)));
    List<String> ids = new ArrayList<>();
    for (String child : children) {
      try {
        ids.add(
            new String(
                curator.getData().forPath(paths.masters() + "/" + child), StandardCharsets.UTF_8));
      } catch (KeeperException.NoNodeException e) {
        // gone meanwhile
      }
    }
    return ids;
  }

  /** Runs {@code LocalCluster verify} on the cluster: its exit status and output. */
  LaunchedCluster.ToolRun verify(Duration patience) throws IOException, InterruptedException {
    return launched.tool(
        patience.plusMinutes(5),
        List.of(
            "verify",
            "--dir",
            layout.dir().toString(),
            "--patience",
            Long.toString(patience.toSeconds())));
  }

  /** The logs of the cluster's processes. */
  Path logs() {
    return layout.dir().toAbsolutePath().normalize().resolve("logs");
  }

  /** Why the cluster cannot be at full strength for want of a process, or empty. */
  Optional<String> processMissing() throws IOException {
    for (String name : processNames()) {
      if (!watch.expected().containsKey(name)) {
        return Optional.of(name + " is down");
      }
      if (!running(name)) {
        return Optional.of(name + " is not running");
      }
    }
    return Optional.empty();
  }

  /**
   * Stops every process (the watch first, so that the stop is not taken for crashes), then unmounts
   * the disks; idempotent.
   */
  @Override
  public synchronized void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    watch.close();
    for (String name : processNames()) {
      watch.down(name);
    }
    try {
      admin.close();
      curator.close();
      launched.close();
    } finally {
      try {
        closeDisks(disks.values());
      } finally {
        Directories.deleteRecursively(layout.zookeeperLogDir());
      }
    }
  }

  private static void closeDisks(Iterable<LoopDisk> disks) throws IOException {
    IOException failure = null;
    for (LoopDisk disk : disks) {
      try {
        disk.close();
      } catch (IOException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  private static SecurityOptions security(Path dir) {
    return SecurityOptions.forClusterDirectory(dir.toAbsolutePath().normalize(), "admin");
  }
}
