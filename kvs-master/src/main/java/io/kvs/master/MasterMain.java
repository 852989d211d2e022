package io.kvs.master;

import io.kvs.core.cli.Flags;
import io.kvs.core.cli.Shutdown;
import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.security.SecurityOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master process.
 *
 * <pre>
 * MasterMain --id m1 --dir DIR [--zookeeper HOST:PORT,...] [--cluster default]
 *            [--regions 1] [--replication 2] [--mode send-index|build-index|none] [--servers 3]
 *            [--min-replicas 1] [--host 127.0.0.1] [--http-port 0] [--session-timeout-ms 4000]
 *            [--split-points K1,K2,... | --split-prefix PREFIX]
 *            [--balancer on|off] [--balance-interval-ms 10000] [--balance-moves 2]
 *            [--split-size 268435456] [--split-first-size 2097152] [--split-qps 0]
 *            [--split-window-ms 10000] [--merge-size 16777216] [--merge-rest-ms 600000]
 *            [--secret-file FILE] [--tls-cert PEM --tls-key PEM --tls-ca PEM]
 *            [--zookeeper-digest-file FILE]
 * </pre>
 *
 * Without {@code --zookeeper} it runs an embedded ZooKeeper with its data under {@code
 * DIR/zookeeper} and writes its connect string to {@code DIR/zookeeper.connect}. The bootstrap
 * options (regions, replication, mode, splits) only matter for a cluster that does not exist yet;
 * {@code --servers} is how many live servers the first assignment waits for. A new cluster has one
 * region by default, which splits as it grows (as a new HBase table or TiKV cluster); with {@code
 * --regions N} the key space is cut at {@code --split-points} (UTF-8, {@code \xNN} escapes; one
 * fewer than regions), or evenly over decimal numbers after {@code --split-prefix} (e.g. {@code
 * usertable:user} for YCSB), or evenly over the first two key bytes. {@code --min-replicas} is the
 * fewest replicas of a region in sync (its primary counted) that accept a write ({@link
 * ClusterConfig#minReplicas}). {@code --session-timeout-ms} is its ZooKeeper session timeout: how
 * soon a standby takes over from an active master that stopped answering; about half the servers'
 * keeps a server fault under a failing master within one server timeout ({@code ./kvs local start}
 * does so; ZooKeeper raises a timeout below twice its tick time to that). {@code --balancer off}
 * stops it from moving replicas and leadership by itself ({@link Balancer}; {@code
 * --balance-interval-ms} is the least time between its rounds, {@code --balance-moves} how many
 * regions may move at once). It splits a region whose primary holds {@code --split-size} bytes (0:
 * never; stepping up from {@code --split-first-size} times the cube of the regions that primary
 * leads), or serves {@code --split-qps} requests a second over {@code --split-window-ms} (0, the
 * default: never), at its middle by size ({@link SplitOptions}). It merges two neighbouring regions
 * (given one replica group first), both below {@code --merge-size} bytes (0: never), cold and seen
 * for {@code --merge-rest-ms} ({@link MergeOptions}). Stops cleanly on SIGTERM.
 */
public final class MasterMain {
  private static final Logger LOG = LoggerFactory.getLogger(MasterMain.class);

  private MasterMain() {}

  public static void main(String[] args) throws Exception {
    Set<String> known =
        new HashSet<>(
            Set.of(
                "id",
                "dir",
                "zookeeper",
                "zookeeper-port",
                "cluster",
                "regions",
                "replication",
                "mode",
                "split-points",
                "split-prefix",
                "servers",
                "min-replicas",
                "host",
                "http-port",
                "session-timeout-ms",
                "balancer",
                "balance-interval-ms",
                "balance-moves",
                "split-size",
                "split-first-size",
                "split-qps",
                "split-window-ms",
                "merge-size",
                "merge-rest-ms"));
    known.addAll(SecurityOptions.FLAG_NAMES);
    Flags flags = Flags.parse(args, known);
    SecurityOptions security = SecurityOptions.fromFlags(flags);
    Path dir = Path.of(flags.require("dir"));
    Files.createDirectories(dir);
    EmbeddedZooKeeper embedded = null;
    String zookeeper = flags.get("zookeeper", "");
    if (zookeeper.isEmpty()) {
      embedded =
          EmbeddedZooKeeper.start(dir.resolve("zookeeper"), flags.getInt("zookeeper-port", 0));
      zookeeper = embedded.connectString();
      embedded.publishConnectString(dir.resolve("zookeeper.connect"));
      LOG.info("embedded ZooKeeper at {}", zookeeper);
    }
    ReplicationMode mode = ReplicationMode.fromConfigName(flags.get("mode", "send-index"));
    int replication = mode == ReplicationMode.NONE ? 1 : flags.getInt("replication", 2);
    int regions = flags.getInt("regions", 1);
    List<byte[]> splits = List.of();
    if (flags.has("split-points")) {
      splits = SplitPoints.parse(flags.require("split-points"));
    } else if (flags.has("split-prefix")) {
      splits = ClusterConfig.decimalSplits(flags.require("split-prefix"), regions);
    }
    ClusterConfig config =
        new ClusterConfig(regions, replication, mode, splits, flags.getInt("min-replicas", 1));
    Duration balanceInterval =
        Duration.ofMillis(
            flags.getLong("balance-interval-ms", BalancerOptions.DEFAULT.interval().toMillis()));
    BalancerOptions balancer =
        new BalancerOptions(
            flags.getOnOff("balancer", true),
            balanceInterval,
            flags.getInt("balance-moves", BalancerOptions.DEFAULT.movesInFlight()),
            balanceInterval.multipliedBy(BalancerOptions.REGION_QUIET_ROUNDS));
    Master master =
        Master.start(
            new MasterOptions(
                flags.get("id", "m1"),
                zookeeper,
                flags.get("cluster", "default"),
                config,
                flags.getInt("servers", replication),
                Duration.ofSeconds(2),
                Duration.ofSeconds(30),
                flags.get("host", "127.0.0.1"),
                flags.getInt("http-port", 0),
                security,
                Duration.ofMillis(
                    flags.getInt(
                        "session-timeout-ms",
                        (int) MasterOptions.DEFAULT_SESSION_TIMEOUT.toMillis())),
                balancer,
                new SplitOptions(
                    flags.getLong("split-size", SplitOptions.DEFAULT.sizeBytes()),
                    flags.getLong("split-first-size", SplitOptions.DEFAULT.firstSizeBytes()),
                    flags.getLong("split-qps", SplitOptions.DEFAULT.qps()),
                    Duration.ofMillis(
                        flags.getLong(
                            "split-window-ms", SplitOptions.DEFAULT.window().toMillis()))),
                new MergeOptions(
                    flags.getLong("merge-size", MergeOptions.DEFAULT.sizeBytes()),
                    Duration.ofMillis(
                        flags.getLong("merge-rest-ms", MergeOptions.DEFAULT.rest().toMillis())),
                    MergeOptions.COLD_QPS)));
    if (embedded != null) {
      Shutdown.closeOnStopAndWait("master", master, embedded);
    } else {
      Shutdown.closeOnStopAndWait("master", master);
    }
  }
}
