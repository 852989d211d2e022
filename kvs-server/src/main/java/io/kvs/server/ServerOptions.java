package io.kvs.server;

import java.nio.file.Path;
import java.util.Objects;

/**
 * How a region server runs.
 *
 * @param id the server's id, stable across restarts
 * @param directory its own directory: the engine volume, persisted epochs
 * @param zookeeper ZooKeeper connect string
 * @param cluster cluster name (the ZooKeeper namespace {@code /kvs/<cluster>})
 * @param host the address every port listens on and is advertised as
 * @param tcpPort Netty TCP front end port (0: free port)
 * @param fabricProvider {@code shm}, {@code tcp}, {@code verbs}, or {@code none} for no fabric
 *     transport
 * @param fabricPort the fabric bootstrap port (0: free port)
 * @param controlPort the control RPC port (0: free port)
 * @param memoryBudgetBytes the engine's memory budget (L0 and caches), 0 for its default
 * @param l0SizeBytes how much a region's in-memory level holds before it is compacted, 0 for the
 *     engine's default
 * @param sessionTimeoutMs the ZooKeeper session timeout: how long after the server stops answering
 *     (dies, pauses, loses its network) its registration expires and the master acts on its
 *     regions; {@link #DEFAULT_SESSION_TIMEOUT_MS} unless set (ZooKeeper bounds it to 2 to 20 of
 *     its ticks). Shorter recovers sooner; too short mistakes a long pause (a GC, an I/O stall) for
 *     a death.
 * @param syncWrites whether a write is acknowledged only once its log record is durable on this
 *     server's device (the engine's sync mode: nothing acknowledged is lost even if every replica
 *     of a region loses power at once); by default writes are flushed every 50 ms, and a write is
 *     acknowledged once every replica in sync holds it in memory
 * @param growthFactor the size ratio between a region's device levels, 0 for the engine's default
 *     (8; the seeds' replication experiments use 4)
 */
public record ServerOptions(
    String id,
    Path directory,
    String zookeeper,
    String cluster,
    String host,
    int tcpPort,
    String fabricProvider,
    int fabricPort,
    int controlPort,
    long memoryBudgetBytes,
    long l0SizeBytes,
    int sessionTimeoutMs,
    boolean syncWrites,
    int growthFactor) {
  /** The default ZooKeeper session timeout: a few seconds, as HBase and Kafka tune for failover. */
  public static final int DEFAULT_SESSION_TIMEOUT_MS = 4_000;

  public ServerOptions {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(directory, "directory");
    Objects.requireNonNull(zookeeper, "zookeeper");
    cluster = cluster == null ? "default" : cluster;
    host = host == null ? "127.0.0.1" : host;
    fabricProvider = fabricProvider == null ? "none" : fabricProvider;
    sessionTimeoutMs = sessionTimeoutMs <= 0 ? DEFAULT_SESSION_TIMEOUT_MS : sessionTimeoutMs;
  }

  /** Options with the engine's default growth factor. */
  public ServerOptions(
      String id,
      Path directory,
      String zookeeper,
      String cluster,
      String host,
      int tcpPort,
      String fabricProvider,
      int fabricPort,
      int controlPort,
      long memoryBudgetBytes,
      long l0SizeBytes,
      int sessionTimeoutMs,
      boolean syncWrites) {
    this(
        id,
        directory,
        zookeeper,
        cluster,
        host,
        tcpPort,
        fabricProvider,
        fabricPort,
        controlPort,
        memoryBudgetBytes,
        l0SizeBytes,
        sessionTimeoutMs,
        syncWrites,
        0);
  }

  /** Options with writes flushed in the background (not synchronous). */
  public ServerOptions(
      String id,
      Path directory,
      String zookeeper,
      String cluster,
      String host,
      int tcpPort,
      String fabricProvider,
      int fabricPort,
      int controlPort,
      long memoryBudgetBytes,
      long l0SizeBytes,
      int sessionTimeoutMs) {
    this(
        id,
        directory,
        zookeeper,
        cluster,
        host,
        tcpPort,
        fabricProvider,
        fabricPort,
        controlPort,
        memoryBudgetBytes,
        l0SizeBytes,
        sessionTimeoutMs,
        false);
  }

  /** Options with the default session timeout. */
  public ServerOptions(
      String id,
      Path directory,
      String zookeeper,
      String cluster,
      String host,
      int tcpPort,
      String fabricProvider,
      int fabricPort,
      int controlPort,
      long memoryBudgetBytes,
      long l0SizeBytes) {
    this(
        id,
        directory,
        zookeeper,
        cluster,
        host,
        tcpPort,
        fabricProvider,
        fabricPort,
        controlPort,
        memoryBudgetBytes,
        l0SizeBytes,
        0);
  }

  /** Options with the engine's default L0 size. */
  public ServerOptions(
      String id,
      Path directory,
      String zookeeper,
      String cluster,
      String host,
      int tcpPort,
      String fabricProvider,
      int fabricPort,
      int controlPort,
      long memoryBudgetBytes) {
    this(
        id,
        directory,
        zookeeper,
        cluster,
        host,
        tcpPort,
        fabricProvider,
        fabricPort,
        controlPort,
        memoryBudgetBytes,
        0);
  }

  /** Defaults for one machine: free ports, shm fabric transport. */
  public static ServerOptions local(String id, Path directory, String zookeeper, String cluster) {
    return new ServerOptions(id, directory, zookeeper, cluster, "127.0.0.1", 0, "shm", 0, 0, 0);
  }

  public boolean hasFabric() {
    return !fabricProvider.equals("none");
  }
}
