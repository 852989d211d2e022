package io.kvs.bench.ycsb;

import io.kvs.client.KvsClientBuilder;
import io.kvs.client.Transport;
import io.kvs.core.security.SecurityOptions;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Properties;

/**
 * How {@link KvsYcsbClient} reaches the cluster, from YCSB's properties:
 *
 * <ul>
 *   <li>{@code kvs.zookeeper}: the ZooKeeper connect string; default: the {@code zookeeper} entry
 *       of {@code cluster.properties} in the local cluster's directory ({@code ./kvs local start})
 *   <li>{@code kvs.local.dir}: that directory, default {@code target/local}
 *   <li>{@code kvs.cluster}: the cluster's name; default: the local cluster's when the connect
 *       string came from it, else {@code default}
 *   <li>{@code kvs.transport}: {@code tcp} (default) or {@code fabric}
 *   <li>{@code kvs.timeout.ms}: the client's operation timeout, default 10000
 * </ul>
 *
 * With the local cluster's directory, the client also takes its client secret and TLS certificate
 * from there ({@link SecurityOptions#forClusterDirectory}).
 */
record ClientSettings(
    String zookeeper,
    String cluster,
    Transport transport,
    Duration timeout,
    SecurityOptions security) {
  /** Settings without security. */
  ClientSettings(String zookeeper, String cluster, Transport transport, Duration timeout) {
    this(zookeeper, cluster, transport, timeout, SecurityOptions.none());
  }

  static final String ZOOKEEPER = "kvs.zookeeper";
  static final String LOCAL_DIR = "kvs.local.dir";
  static final String CLUSTER = "kvs.cluster";
  static final String TRANSPORT = "kvs.transport";
  static final String TIMEOUT_MS = "kvs.timeout.ms";

  /**
   * Reads the settings.
   *
   * @throws IllegalArgumentException if a property is malformed, or no connect string is given and
   *     the local cluster's directory has none
   * @throws IOException if {@code cluster.properties} cannot be read
   */
  static ClientSettings from(Properties properties) throws IOException {
    String zookeeper = properties.getProperty(ZOOKEEPER, "").trim();
    String cluster = properties.getProperty(CLUSTER, "").trim();
    SecurityOptions security = SecurityOptions.none();
    if (zookeeper.isEmpty()) {
      Path directory = Path.of(properties.getProperty(LOCAL_DIR, "target/local"));
      security = SecurityOptions.forClusterDirectory(directory, "client");
      Properties local = localCluster(directory);
      zookeeper = local.getProperty("zookeeper", "").trim();
      if (zookeeper.isEmpty()) {
        throw new IllegalArgumentException(
            "no ZooKeeper connect string in " + directory.resolve("cluster.properties"));
      }
      if (cluster.isEmpty()) {
        cluster = local.getProperty("cluster", "").trim();
      }
    }
    if (cluster.isEmpty()) {
      cluster = KvsClientBuilder.DEFAULT_CLUSTER;
    }
    return new ClientSettings(
        zookeeper, cluster, transport(properties), timeout(properties), security);
  }

  private static Properties localCluster(Path directory) throws IOException {
    Properties local = new Properties();
    try (Reader in =
        Files.newBufferedReader(directory.resolve("cluster.properties"), StandardCharsets.UTF_8)) {
      local.load(in);
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException(
          "no "
              + ZOOKEEPER
              + " given and no local cluster in "
              + directory.toAbsolutePath()
              + ": start one with ./kvs local start, or set "
              + LOCAL_DIR,
          e);
    }
    return local;
  }

  private static Transport transport(Properties properties) {
    String name = properties.getProperty(TRANSPORT, "tcp").trim().toLowerCase(Locale.ROOT);
    return switch (name) {
      case "tcp" -> Transport.TCP;
      case "fabric" -> Transport.FABRIC;
      default ->
          throw new IllegalArgumentException(
              TRANSPORT + " must be tcp or fabric: " + properties.getProperty(TRANSPORT));
    };
  }

  private static Duration timeout(Properties properties) {
    String text = properties.getProperty(TIMEOUT_MS);
    if (text == null) {
      return KvsClientBuilder.DEFAULT_OPERATION_TIMEOUT;
    }
    try {
      long millis = Long.parseLong(text.trim());
      if (millis >= 1) {
        return Duration.ofMillis(millis);
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(TIMEOUT_MS + " must be a number of ms >= 1: " + text);
  }
}
