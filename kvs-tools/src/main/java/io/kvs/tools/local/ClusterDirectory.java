package io.kvs.tools.local;

import io.kvs.core.cli.Processes;
import io.kvs.core.security.SecurityOptions;
import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * A local cluster's directory: {@code cluster.properties} (ZooKeeper connect string, cluster name,
 * the pid and the command line of every process by name), {@code logs/<name>.log}, {@code
 * zookeeper/}, {@code masters/<id>/}, {@code servers/<id>/}, the cluster secret {@code secret}, the
 * client secret {@code client-secret} (mode 0600) and with {@code --tls} the throwaway CA and
 * certificates under {@code tls/}.
 */
final class ClusterDirectory {
  private final Path root;

  ClusterDirectory(Path root) {
    this.root = root.toAbsolutePath();
  }

  Path root() {
    return root;
  }

  Path logs() {
    return root.resolve("logs");
  }

  Path zookeeper() {
    return root.resolve("zookeeper");
  }

  Path server(String id) {
    return root.resolve("servers").resolve(id);
  }

  Path master(String id) {
    return root.resolve("masters").resolve(id);
  }

  /** The cluster secret every process of the cluster gets with {@code --secret-file}. */
  Path secretFile() {
    return root.resolve("secret");
  }

  /**
   * The client secret servers get with {@code --client-secret-file}, and clients (the shell, the
   * demo, YCSB) prove.
   */
  Path clientSecretFile() {
    return root.resolve("client-secret");
  }

  /** The throwaway CA and certificates of a cluster started with {@code --tls}. */
  Path tls() {
    return root.resolve("tls");
  }

  /**
   * What a tool needs to talk to this cluster's processes: the secret if the cluster has one, and
   * the tools' certificate if it runs with TLS.
   */
  SecurityOptions toolSecurity() {
    return SecurityOptions.forClusterDirectory(root, "admin");
  }

  private Path properties() {
    return root.resolve("cluster.properties");
  }

  /**
   * The recorded state: "zookeeper", "cluster", "pid.<name>" and "command.<name>" entries, in start
   * order.
   */
  Map<String, String> load() throws IOException {
    Map<String, String> state = new LinkedHashMap<>();
    if (!Files.exists(properties())) {
      return state;
    }
    Properties stored = new Properties();
    try (Reader in = Files.newBufferedReader(properties(), StandardCharsets.UTF_8)) {
      stored.load(in);
    }
    String order = stored.getProperty("order", "");
    state.put("zookeeper", stored.getProperty("zookeeper", ""));
    state.put("cluster", stored.getProperty("cluster", "default"));
    for (String name : order.split(",")) {
      if (!name.isEmpty()) {
        state.put("pid." + name, stored.getProperty("pid." + name, ""));
        String command = stored.getProperty("command." + name);
        if (command != null) {
          state.put("command." + name, command);
        }
      }
    }
    return state;
  }

  void save(Map<String, String> state) throws IOException {
    Files.createDirectories(root);
    Properties stored = new Properties();
    StringBuilder order = new StringBuilder();
    state.forEach(
        (key, value) -> {
          stored.setProperty(key, value);
          if (key.startsWith("pid.")) {
            order.append(order.length() == 0 ? "" : ",").append(key.substring(4));
          }
        });
    stored.setProperty("order", order.toString());
    Path temporary = root.resolve("cluster.properties.tmp");
    try (Writer out = Files.newBufferedWriter(temporary, StandardCharsets.UTF_8)) {
      stored.store(out, "KVS local cluster");
    }
    Files.move(temporary, properties(), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  /** The process recorded as {@code name}, if it still runs. */
  static Optional<ProcessHandle> running(String pid) {
    if (pid == null || pid.isEmpty()) {
      return Optional.empty();
    }
    // A pid the system reused for something else is not ours.
    return ProcessHandle.of(Long.parseLong(pid))
        .filter(Processes::running)
        .filter(ClusterDirectory::isKvsProcess);
  }

  // Reads the whole command line: the JDK's ProcessHandle.Info truncates it to 4 KiB, and ours
  // carry long class paths before the main class.
  private static boolean isKvsProcess(ProcessHandle process) {
    Path cmdline = Path.of("/proc", Long.toString(process.pid()), "cmdline");
    try {
      return new String(Files.readAllBytes(cmdline), StandardCharsets.UTF_8).contains("io.kvs.");
    } catch (IOException e) {
      return process.info().commandLine().map(c -> c.contains("io.kvs.")).orElse(true);
    }
  }
}
