package io.kvs.tools.local;

import io.kvs.core.cli.Flags;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;

/**
 * {@code ./kvs local start|status|verify|stop|kill|pause|resume|restart|join}: a cluster of
 * separate processes on this machine, faults injected into them (SIGKILL, SIGSTOP, SIGCONT,
 * restart), and a region server new to it ({@code join s4}).
 *
 * <pre>
 * LocalCluster start  --dir DIR [--servers 3] [--regions 1] [--replication 2]
 *                     [--mode send-index|build-index|none] [--masters 1] [--fabric stream|tcp|shm|none]
 *                     [--split-points K1,K2,... | --split-prefix PREFIX] [--memory BYTES]
 *                     [--l0-size BYTES] [--growth-factor N] [--session-timeout-ms MS]
 *                     [--master-session-timeout-ms MS] [--min-replicas N]
 *                     [--balancer on|off] [--balance-interval-ms MS] [--balance-moves N]
 *                     [--split-size BYTES] [--split-first-size BYTES] [--split-qps N]
 *                     [--split-window-ms MS] [--merge-size BYTES] [--merge-rest-ms MS]
 *                     [--durability flush|sync] [--metrics on|off] [--watchdog-ms MS] [--shards N]
 *                     [--tls [on|off]] [--tls-client-auth none|require]
 *                     [--native-library FILE] [--zookeeper-log-dir DIR]
 * LocalCluster status --dir DIR
 * LocalCluster verify --dir DIR [--patience SECONDS]
 * LocalCluster stop   --dir DIR
 * LocalCluster kill|pause|resume|restart NAME --dir DIR
 * LocalCluster join ID --dir DIR
 * </pre>
 *
 * Starting again over an existing directory reuses its data: every server reopens its volume and
 * the master reopens the regions where they were.
 */
public final class LocalCluster {
  private LocalCluster() {}

  /**
   * The masters' ZooKeeper session timeout unless given: half the servers' (at least 1 s). A master
   * failover then fits inside a server's failure detection: when the active master fails while a
   * server's session runs out, its standby leads again by about when the server is declared dead,
   * and the server's regions are unavailable for about the servers' session timeout, not for both
   * timeouts one after the other. A master's failover moves no data (servers keep serving), so a
   * short session costs little.
   */
  public static int defaultMasterSessionMillis(int serverSessionMillis) {
    return Math.max(1_000, serverSessionMillis / 2);
  }

  /** {@code --tls} alone means {@code --tls on} (every other option takes a value). */
  static String[] withTlsValue(String[] args) {
    java.util.List<String> out = new java.util.ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      out.add(args[i]);
      boolean valued =
          i + 1 < args.length && (args[i + 1].equals("on") || args[i + 1].equals("off"));
      if (args[i].equals("--tls") && !valued) {
        out.add("on");
      }
    }
    return out.toArray(String[]::new);
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 0) {
      usage();
      System.exit(2);
    }
    String[] rest = withTlsValue(java.util.Arrays.copyOfRange(args, 1, args.length));
    try {
      switch (args[0]) {
        case "start" -> {
          Flags flags =
              Flags.parse(
                  rest,
                  Set.of(
                      "dir",
                      "servers",
                      "regions",
                      "replication",
                      "mode",
                      "masters",
                      "fabric",
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
                      "merge-rest-ms",
                      "memory",
                      "l0-size",
                      "session-timeout-ms",
                      "master-session-timeout-ms",
                      "min-replicas",
                      "durability",
                      "growth-factor",
                      "tls",
                      "tls-client-auth",
                      "metrics",
                      "native-library",
                      "zookeeper-log-dir",
                      "watchdog-ms",
                      "shards"));
          new LocalStart(new ClusterDirectory(Path.of(flags.require("dir"))), flags).run();
        }
        case "status" -> {
          Flags flags = Flags.parse(rest, Set.of("dir"));
          System.exit(new LocalStatus(new ClusterDirectory(Path.of(flags.require("dir")))).run());
        }
        case "verify" -> {
          Flags flags = Flags.parse(rest, Set.of("dir", "patience"));
          Duration patience = Duration.ofSeconds(flags.getInt("patience", 30));
          System.exit(
              new LocalVerify(new ClusterDirectory(Path.of(flags.require("dir"))), patience).run());
        }
        case "stop" -> {
          Flags flags = Flags.parse(rest, Set.of("dir"));
          new LocalStop(new ClusterDirectory(Path.of(flags.require("dir")))).run();
        }
        case "kill", "pause", "resume", "restart" -> {
          if (rest.length == 0 || rest[0].startsWith("--")) {
            throw new IllegalArgumentException(args[0] + " needs a process: s1, m1, zookeeper");
          }
          Flags flags =
              Flags.parse(java.util.Arrays.copyOfRange(rest, 1, rest.length), Set.of("dir"));
          LocalFault.Action action = LocalFault.Action.valueOf(args[0].toUpperCase(Locale.ROOT));
          System.exit(
              new LocalFault(new ClusterDirectory(Path.of(flags.require("dir"))))
                  .run(action, rest[0]));
        }
        case "join" -> {
          if (rest.length == 0 || rest[0].startsWith("--")) {
            throw new IllegalArgumentException("join needs a new server's id: s4");
          }
          Flags flags =
              Flags.parse(java.util.Arrays.copyOfRange(rest, 1, rest.length), Set.of("dir"));
          System.exit(
              new LocalJoin(new ClusterDirectory(Path.of(flags.require("dir")))).run(rest[0]));
        }
        default -> {
          usage();
          System.exit(2);
        }
      }
    } catch (IllegalArgumentException | IllegalStateException e) {
      System.err.println("kvs local: " + e.getMessage());
      System.exit(2);
    }
  }

  private static void usage() {
    System.err.println(
        "usage: ./kvs local start [--servers 3] [--regions 32] [--replication 2]"
            + " [--mode send-index|build-index|none] [--masters 1] [--fabric stream|tcp|shm|none]"
            + " [--split-points K1,K2,... | --split-prefix PREFIX] [--memory BYTES]"
            + " [--l0-size BYTES] [--growth-factor N] [--session-timeout-ms MS]"
            + " [--master-session-timeout-ms MS]"
            + " [--balancer on|off] [--balance-interval-ms MS] [--balance-moves N]"
            + " [--split-size BYTES] [--split-first-size BYTES] [--split-qps N]"
            + " [--split-window-ms MS] [--merge-size BYTES] [--merge-rest-ms MS]"
            + " [--metrics on|off] [--watchdog-ms MS] [--shards N] [--native-library FILE]"
            + " [--zookeeper-log-dir DIR]\n"
            + "       ./kvs local status\n"
            + "       ./kvs local verify [--patience SECONDS]\n"
            + "       ./kvs local stop\n"
            + "       ./kvs local kill|pause|resume|restart s1|m1|zookeeper\n"
            + "       ./kvs local join s4");
  }
}
