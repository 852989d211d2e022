package io.kvs.server;

import io.kvs.core.cli.Flags;
import io.kvs.core.cli.Shutdown;
import io.kvs.core.security.SecurityOptions;
import io.kvs.server.tcp.ClientPortOptions;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

/**
 * The region server process.
 *
 * <pre>
 * RegionServerMain --id s1 --dir DIR --zookeeper HOST:PORT [--cluster default] [--host 127.0.0.1]
 *                  [--tcp-port 0] [--fabric stream|tcp|shm|verbs|none] [--fabric-port 0]
 *                  [--control-port 0] [--http-port 0] [--memory BYTES] [--l0-size BYTES] [--growth-factor N]
 *                  [--session-timeout-ms 4000] [--durability flush|sync] [--metrics on|off]
 *                  [--max-client-connections 1024] [--shards N] [--watchdog-ms 30000]
 *                  [--secret-file FILE] [--tls-cert PEM --tls-key PEM --tls-ca PEM
 *                  [--tls-client-auth none|require]] [--zookeeper-digest-file FILE]
 * </pre>
 *
 * {@code --durability sync}: acknowledge writes only once durable on this server's device (see
 * {@link ServerOptions#syncWrites}); {@code flush} (the default) flushes them every 50 ms. {@code
 * --metrics off} stops counting and timing requests on the request path ({@link
 * ServerOptions#requestMetrics}), to measure what that costs. {@code --shards}: the threads of the
 * native client door, which serves the client port, TLS included ({@link ServerOptions#shards};
 * default: one per core). {@code --watchdog-ms}: how long a shard or the replication thread may go
 * without coming round its loop before the server stops itself, with exit code 3 ({@link
 * ServerOptions#watchdogMs}). Stops cleanly on SIGTERM: leaves the cluster, drains the transports,
 * syncs the engine.
 */
public final class RegionServerMain {
  private RegionServerMain() {}

  /** Whether {@code --durability} asks for synchronous writes. */
  static boolean durability(String value) {
    return switch (value) {
      case "sync" -> true;
      case "flush" -> false;
      default -> throw new IllegalArgumentException("--durability is flush or sync, not " + value);
    };
  }

  /** Whether {@code --metrics} asks for request metrics. */
  static boolean metrics(String value) {
    return switch (value) {
      case "on" -> true;
      case "off" -> false;
      default -> throw new IllegalArgumentException("--metrics is on or off, not " + value);
    };
  }

  public static void main(String[] args) throws Exception {
    Set<String> known =
        new HashSet<>(
            Set.of(
                "id",
                "dir",
                "zookeeper",
                "cluster",
                "host",
                "tcp-port",
                "fabric",
                "fabric-port",
                "control-port",
                "http-port",
                "memory",
                "l0-size",
                "session-timeout-ms",
                "durability",
                "growth-factor",
                "metrics",
                "max-client-connections",
                "shards",
                "watchdog-ms"));
    known.addAll(SecurityOptions.FLAG_NAMES);
    Flags flags = Flags.parse(args, known);
    RegionServer server =
        RegionServer.start(
            ServerOptions.builder(
                    flags.require("id"), Path.of(flags.require("dir")), flags.require("zookeeper"))
                .cluster(flags.get("cluster", "default"))
                .host(flags.get("host", "127.0.0.1"))
                .tcpPort(flags.getInt("tcp-port", 0))
                .fabricProvider(flags.get("fabric", "stream"))
                .fabricPort(flags.getInt("fabric-port", 0))
                .controlPort(flags.getInt("control-port", 0))
                .httpPort(flags.getInt("http-port", 0))
                .memoryBudgetBytes(flags.getLong("memory", 0))
                .l0SizeBytes(flags.getLong("l0-size", 0))
                .sessionTimeoutMs(
                    flags.getInt("session-timeout-ms", ServerOptions.DEFAULT_SESSION_TIMEOUT_MS))
                .syncWrites(durability(flags.get("durability", "flush")))
                .growthFactor(flags.getInt("growth-factor", 0))
                .security(SecurityOptions.fromFlags(flags))
                .requestMetrics(metrics(flags.get("metrics", "on")))
                .maxClientConnections(
                    flags.getInt(
                        "max-client-connections", ClientPortOptions.DEFAULT_MAX_CONNECTIONS))
                .shards(flags.getInt("shards", 0))
                .watchdogMs(flags.getInt("watchdog-ms", 0))
                .build());
    Shutdown.closeOnStopAndWait("region-server", server);
  }
}
