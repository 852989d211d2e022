package io.kvs.server;

import io.kvs.core.security.SecurityOptions;
import io.kvs.server.tcp.ClientPortOptions;
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
 * @param tcpPort the client TCP port (0: free port)
 * @param fabricProvider {@code shm}, {@code tcp}, {@code verbs}, {@code stream}, or {@code none}
 *     for no fabric transport
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
 * @param httpPort the operator HTTP port ({@code /health}, {@code /metrics}; 0: free port)
 * @param security the cluster secret (control RPC, fabric bootstrap), TLS (client TCP port, control
 *     RPC) and ZooKeeper credentials; none by default (docs/OPERATIONS.md, "Security")
 * @param requestMetrics whether the native request path counts requests and times them
 *     (docs/OPERATIONS.md, "Metrics"); on by default, off only to measure what it costs
 *     (docs/BENCHMARKS.md, "Cost of metrics"). Every other metric is read on a schedule and stays.
 * @param maxClientConnections client connections the client port keeps open at once at most; one
 *     beyond is closed as soon as it is accepted ({@code 0}: {@link
 *     ClientPortOptions#DEFAULT_MAX_CONNECTIONS})
 * @param shards the shard threads of the native client door, which serves the client port (each
 *     runs its connections' requests to completion; docs/ARCHITECTURE.md "Server threads"), 1..256;
 *     0 (the default): one per core the process may use, at most 256
 * @param watchdogMs how long a shard or the replication thread may go without coming round its loop
 *     before the server stops itself (exit code {@link #EXIT_STUCK}) so that the master moves its
 *     regions (docs/ARCHITECTURE.md "Watchdog"); 0: {@link #DEFAULT_WATCHDOG_MS}, at least {@link
 *     #MIN_WATCHDOG_MS}
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
    int growthFactor,
    int httpPort,
    SecurityOptions security,
    boolean requestMetrics,
    int maxClientConnections,
    int shards,
    int watchdogMs) {
  /**
   * The default watchdog limit: far above any bounded wait of a loop's turn (a backup's connect
   * handshake, a fabric post waiting out the stall timeout), far below "for ever".
   */
  public static final int DEFAULT_WATCHDOG_MS = 30_000;

  /** The shortest watchdog limit: four probes a second at most. */
  public static final int MIN_WATCHDOG_MS = 1_000;

  /** The exit code of a server its watchdog stopped. */
  public static final int EXIT_STUCK = 3;

  /** The default ZooKeeper session timeout: a few seconds, as HBase and Kafka tune for failover. */
  public static final int DEFAULT_SESSION_TIMEOUT_MS = 4_000;

  public ServerOptions {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(directory, "directory");
    Objects.requireNonNull(zookeeper, "zookeeper");
    cluster = cluster == null ? "default" : cluster;
    host = host == null ? "127.0.0.1" : host;
    fabricProvider = fabricProvider == null ? "none" : fabricProvider;
    security = security == null ? SecurityOptions.none() : security;
    sessionTimeoutMs = sessionTimeoutMs <= 0 ? DEFAULT_SESSION_TIMEOUT_MS : sessionTimeoutMs;
    if (maxClientConnections < 0) {
      throw new IllegalArgumentException(
          "maxClientConnections must not be negative: " + maxClientConnections);
    }
    if (shards < 0 || shards > 256) {
      throw new IllegalArgumentException("shards must be 0..256: " + shards);
    }
    if (watchdogMs != 0 && watchdogMs < MIN_WATCHDOG_MS) {
      throw new IllegalArgumentException(
          "watchdogMs must be 0 (the default) or at least " + MIN_WATCHDOG_MS + ": " + watchdogMs);
    }
    watchdogMs = watchdogMs == 0 ? DEFAULT_WATCHDOG_MS : watchdogMs;
    shards = shards == 0 ? Math.min(256, Runtime.getRuntime().availableProcessors()) : shards;
    maxClientConnections =
        maxClientConnections == 0
            ? ClientPortOptions.DEFAULT_MAX_CONNECTIONS
            : maxClientConnections;
  }

  /**
   * Options for server {@code id} with its directory and ZooKeeper, every other option at its
   * default (cluster {@code default}, host 127.0.0.1, free ports, no fabric transport, the engine's
   * defaults, writes flushed every 50 ms) until set.
   */
  public static Builder builder(String id, Path directory, String zookeeper) {
    return new Builder(id, directory, zookeeper);
  }

  /** Defaults for one machine: free ports, shm fabric transport. */
  public static ServerOptions local(String id, Path directory, String zookeeper, String cluster) {
    return builder(id, directory, zookeeper).cluster(cluster).fabricProvider("shm").build();
  }

  public boolean hasFabric() {
    return !fabricProvider.equals("none");
  }

  /** Builds {@link ServerOptions}; each setter is one record component. */
  public static final class Builder {
    private final String id;
    private final Path directory;
    private final String zookeeper;
    private String cluster = "default";
    private String host = "127.0.0.1";
    private int tcpPort;
    private String fabricProvider = "none";
    private int fabricPort;
    private int controlPort;
    private long memoryBudgetBytes;
    private long l0SizeBytes;
    private int sessionTimeoutMs;
    private boolean syncWrites;
    private int growthFactor;
    private int httpPort;
    private SecurityOptions security = SecurityOptions.none();
    private boolean requestMetrics = true;
    private int maxClientConnections;
    private int shards;
    private int watchdogMs;

    private Builder(String id, Path directory, String zookeeper) {
      this.id = id;
      this.directory = directory;
      this.zookeeper = zookeeper;
    }

    public Builder cluster(String cluster) {
      this.cluster = cluster;
      return this;
    }

    public Builder host(String host) {
      this.host = host;
      return this;
    }

    public Builder tcpPort(int tcpPort) {
      this.tcpPort = tcpPort;
      return this;
    }

    public Builder fabricProvider(String fabricProvider) {
      this.fabricProvider = fabricProvider;
      return this;
    }

    public Builder fabricPort(int fabricPort) {
      this.fabricPort = fabricPort;
      return this;
    }

    public Builder controlPort(int controlPort) {
      this.controlPort = controlPort;
      return this;
    }

    public Builder memoryBudgetBytes(long memoryBudgetBytes) {
      this.memoryBudgetBytes = memoryBudgetBytes;
      return this;
    }

    public Builder l0SizeBytes(long l0SizeBytes) {
      this.l0SizeBytes = l0SizeBytes;
      return this;
    }

    public Builder sessionTimeoutMs(int sessionTimeoutMs) {
      this.sessionTimeoutMs = sessionTimeoutMs;
      return this;
    }

    public Builder syncWrites(boolean syncWrites) {
      this.syncWrites = syncWrites;
      return this;
    }

    public Builder growthFactor(int growthFactor) {
      this.growthFactor = growthFactor;
      return this;
    }

    public Builder httpPort(int httpPort) {
      this.httpPort = httpPort;
      return this;
    }

    /** How the server authenticates and encrypts; {@link SecurityOptions#none()} by default. */
    public Builder security(SecurityOptions security) {
      this.security = java.util.Objects.requireNonNull(security, "security");
      return this;
    }

    /** Whether requests are counted and timed (default: true). */
    public Builder requestMetrics(boolean requestMetrics) {
      this.requestMetrics = requestMetrics;
      return this;
    }

    /**
     * Client connections open at once at most (at least 1; default {@link
     * ClientPortOptions#DEFAULT_MAX_CONNECTIONS}).
     */
    public Builder maxClientConnections(int maxClientConnections) {
      if (maxClientConnections < 1) {
        throw new IllegalArgumentException(
            "maxClientConnections must be at least 1: " + maxClientConnections);
      }
      this.maxClientConnections = maxClientConnections;
      return this;
    }

    /** The native client door's shard threads (0: one per core). */
    public Builder shards(int shards) {
      this.shards = shards;
      return this;
    }

    /** How long a stuck loop is borne before the server stops (0: the default, 30 s). */
    public Builder watchdogMs(int watchdogMs) {
      this.watchdogMs = watchdogMs;
      return this;
    }

    public ServerOptions build() {
      return new ServerOptions(
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
          growthFactor,
          httpPort,
          security,
          requestMetrics,
          maxClientConnections,
          shards,
          watchdogMs);
    }
  }
}
