package io.kvs.tools;

import io.kvs.core.cli.Processes;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * The cluster a tool talks to: a ZooKeeper connect string and a cluster name, given on the command
 * line ({@code --zookeeper}, {@code --cluster}) or read from a local cluster's directory ({@code
 * --dir}: its {@code cluster.properties}, written by {@code ./kvs local start}).
 */
public record ClusterTarget(String zookeeper, String cluster) {
  /**
   * The target the options name: {@code zookeeper} and {@code cluster} win over {@code dir}.
   *
   * @throws IllegalArgumentException naming what is missing: no option given, no cluster in {@code
   *     dir}, or that cluster's ZooKeeper is not running
   */
  public static ClusterTarget resolve(Path dir, String zookeeper, String cluster)
      throws IOException {
    if (zookeeper != null) {
      return new ClusterTarget(zookeeper, cluster == null ? "default" : cluster);
    }
    if (dir == null) {
      throw new IllegalArgumentException(
          "give the local cluster's --dir, or --zookeeper HOST:PORT");
    }
    Path file = dir.resolve("cluster.properties");
    if (!Files.exists(file)) {
      throw new IllegalArgumentException(
          "no local cluster in "
              + dir.toAbsolutePath()
              + ": start one with ./kvs local start, or give --zookeeper HOST:PORT");
    }
    Properties state = new Properties();
    try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      state.load(reader);
    }
    String pid = state.getProperty("pid.zookeeper", "");
    boolean running =
        pid.matches("[0-9]+")
            && ProcessHandle.of(Long.parseLong(pid)).map(Processes::running).orElse(false);
    String connect = state.getProperty("zookeeper", "");
    if (connect.isEmpty() || !running) {
      throw new IllegalArgumentException(
          "the local cluster in "
              + dir.toAbsolutePath()
              + " is not running (its ZooKeeper is stopped): ./kvs local start");
    }
    return new ClusterTarget(
        connect, cluster != null ? cluster : state.getProperty("cluster", "default"));
  }
}
