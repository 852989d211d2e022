package io.kvs.tools.local;

import io.kvs.core.cli.Flags;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.security.ClusterSecret;
import io.kvs.core.security.ThrowawayCertificates;
import io.kvs.master.MasterMain;
import io.kvs.master.ZooKeeperMain;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Starts a local cluster's processes and waits until every region is open. Every start writes a new
 * cluster secret and a new client secret into the directory and passes them to every process;
 * {@code --tls on} also makes a throwaway CA and a certificate per process ({@link
 * ThrowawayCertificates}) and starts every process with TLS ({@code --tls-client-auth require}:
 * mutual TLS on the client port too). {@code --native-library FILE} makes the region servers load
 * that libkvs instead of their jar's ({@link NativeLibraryLaunch}: an AddressSanitizer build runs
 * with its runtime preloaded and its reports in {@code logs/server-<id>.sanitizer.<pid>}).
 */
final class LocalStart {
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);

  private final ClusterDirectory directory;
  private final Flags flags;

  LocalStart(ClusterDirectory directory, Flags flags) {
    this.directory = directory;
    this.flags = flags;
  }

  /** ZooKeeper's flags: its directory, and {@code --zookeeper-log-dir}'s for its log if given. */
  private List<String> zookeeperArguments() {
    List<String> arguments = new ArrayList<>(List.of("--dir", directory.zookeeper().toString()));
    if (flags.has("zookeeper-log-dir")) {
      arguments.add("--log-dir");
      arguments.add(flags.require("zookeeper-log-dir"));
    }
    return arguments;
  }

  void run() throws Exception {
    Map<String, String> state = directory.load();
    for (Map.Entry<String, String> entry : state.entrySet()) {
      if (entry.getKey().startsWith("pid.")
          && ClusterDirectory.running(entry.getValue()).isPresent()) {
        throw new IllegalStateException(
            "a local cluster is already running in "
                + directory.root()
                + "; ./kvs local stop first");
      }
    }
    int servers = flags.getInt("servers", 3);
    int masters = flags.getInt("masters", 1);
    ReplicationMode mode = ReplicationMode.fromConfigName(flags.get("mode", "send-index"));
    int replication = mode == ReplicationMode.NONE ? 1 : flags.getInt("replication", 2);
    if (servers < replication) {
      throw new IllegalArgumentException(
          "replication " + replication + " needs at least as many servers, not " + servers);
    }
    Files.createDirectories(directory.logs());
    // Fresh secrets per start: the cluster's processes prove the cluster secret on the control RPC
    // and to each other when they replicate; clients prove the client secret, which commands
    // nothing.
    ClusterSecret.generate(directory.secretFile());
    ClusterSecret.generate(directory.clientSecretFile());
    List<String> security =
        new ArrayList<>(List.of("--secret-file", directory.secretFile().toString()));
    boolean tls = flags.get("tls", "off").equals("on");
    ThrowawayCertificates certificates = new ThrowawayCertificates(directory.tls());
    if (tls) {
      certificates.createAuthority();
    } else {
      certificates.delete();
    }
    state.clear();
    state.put("cluster", "default");

    Path connectFile = directory.zookeeper().resolve("zookeeper.connect");
    Files.deleteIfExists(connectFile);
    spawn(state, "zookeeper", ZooKeeperMain.class.getName(), "512m", zookeeperArguments());
    String zookeeper = awaitFile(connectFile, Duration.ofSeconds(60)).trim();
    state.put("zookeeper", zookeeper);
    directory.save(state);
    System.out.printf("zookeeper at %s%n", zookeeper);

    List<String> masterFlags = new ArrayList<>();
    for (String flag :
        List.of(
            "split-points",
            "split-prefix",
            "balancer",
            "balance-interval-ms",
            "balance-moves",
            "split-size",
            "split-first-size",
            "split-qps",
            "split-window-ms",
            "merge-size",
            "merge-rest-ms")) {
      if (flags.has(flag)) {
        masterFlags.add("--" + flag);
        masterFlags.add(flags.require(flag));
      }
    }
    for (int i = 1; i <= masters; i++) {
      String id = "m" + i;
      List<String> arguments =
          new ArrayList<>(
              List.of(
                  "--id",
                  id,
                  "--dir",
                  directory.master(id).toString(),
                  "--zookeeper",
                  zookeeper,
                  "--regions",
                  Integer.toString(flags.getInt("regions", 1)),
                  "--replication",
                  Integer.toString(replication),
                  "--mode",
                  mode.configName(),
                  "--servers",
                  Integer.toString(servers),
                  "--min-replicas",
                  Integer.toString(flags.getInt("min-replicas", 1)),
                  "--session-timeout-ms",
                  Integer.toString(
                      flags.getInt(
                          "master-session-timeout-ms",
                          LocalCluster.defaultMasterSessionMillis(
                              flags.getInt("session-timeout-ms", 4000))))));
      arguments.addAll(masterFlags);
      arguments.addAll(security);
      if (tls) {
        arguments.addAll(certificates.flags(id, false));
      }
      spawn(state, "master-" + id, MasterMain.class.getName(), "512m", arguments);
    }
    boolean mutual = flags.get("tls-client-auth", "none").equals("require");
    // Region servers may run another build of libkvs (e.g. ./kvs asan-library's).
    Path nativeLibrary =
        flags.has("native-library") ? Path.of(flags.require("native-library")) : null;
    for (int i = 1; i <= servers; i++) {
      String id = "s" + i;
      List<String> arguments = new ArrayList<>(security);
      arguments.addAll(List.of("--client-secret-file", directory.clientSecretFile().toString()));
      if (tls) {
        arguments.addAll(certificates.flags(id, mutual));
      }
      arguments.addAll(
          List.of(
              "--id",
              id,
              "--dir",
              directory.server(id).toString(),
              "--zookeeper",
              zookeeper,
              "--fabric",
              flags.get("fabric", "stream"),
              "--memory",
              Long.toString(flags.getLong("memory", 0)),
              "--l0-size",
              Long.toString(flags.getLong("l0-size", 0)),
              "--session-timeout-ms",
              Integer.toString(flags.getInt("session-timeout-ms", 4000)),
              "--durability",
              flags.get("durability", "flush"),
              "--growth-factor",
              Integer.toString(flags.getInt("growth-factor", 0)),
              "--metrics",
              flags.get("metrics", "on"),
              "--watchdog-ms",
              Integer.toString(flags.getInt("watchdog-ms", 0)),
              "--shards",
              Integer.toString(flags.getInt("shards", 0))));
      String name = "server-" + id;
      LocalProcesses.spawn(
          directory,
          state,
          name,
          "io.kvs.server.RegionServerMain",
          "1g",
          NativeLibraryLaunch.of(nativeLibrary, directory.logs(), name),
          arguments);
    }
    directory.save(state);
    System.out.printf(
        "started %d master(s) and %d region servers; logs in %s%n",
        masters, servers, directory.logs());
    new LocalStatus(directory).awaitOpen(READY_TIMEOUT);
    new LocalStatus(directory).run();
  }

  /** Starts a process whose JVM loads the jar's libkvs (ZooKeeper, a master). */
  private void spawn(
      Map<String, String> state, String name, String mainClass, String heap, List<String> arguments)
      throws IOException {
    LocalProcesses.spawn(
        directory, state, name, mainClass, heap, NativeLibraryLaunch.none(), arguments);
  }

  private static String awaitFile(Path file, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!Files.exists(file)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(file + " did not appear within " + timeout);
      }
      Thread.sleep(50); // polling a file another process writes: no event to wait on
    }
    return Files.readString(file, StandardCharsets.UTF_8);
  }
}
