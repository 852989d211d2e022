package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.History;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.Verdict;
import io.kvs.client.KvsClient;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.ControlClient;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.security.SecurityOptions;
import io.kvs.tools.admin.AdminMain;
import io.kvs.tools.local.LocalStatus;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./kvs admin} against four region server processes at replication 3 (send-index) while four
 * clients write, delete and read shared keys, every operation recorded: the primary of the loaded
 * region is handed over to one of its backups, a move to a server outside the group is refused with
 * nothing changed, then the new primary's server is decommissioned (its primaries hand over, its
 * backups are replaced by the fourth server). Checked: every operation of the load succeeded (a
 * planned move costs clients a retry, never an error), the history is linearizable with no write
 * lost, the drained server holds no region, every group is whole on the other three, and {@code
 * LocalCluster verify} finds the backups holding what their primaries hold (with data in every
 * region's device levels: small L0s, a few MiB written first).
 */
class AdminIT {
  private static final int REGIONS = 2;
  private static final int KEYS = 20;
  private static final int CLIENTS = 4;
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration AWAIT = Duration.ofSeconds(120);

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  static Path dir;

  /** The cluster secret ./kvs local start wrote (the control RPC asks for its proof). */
  private static Path secret;

  /** What one {@code ./kvs admin} run printed, and its exit status. */
  private record Run(int status, String out, String err) {}

  private static Run admin(String zookeeper, String... command) {
    List<String> args =
        new ArrayList<>(
            List.of("--zookeeper", zookeeper, "--wait", "90", "--secret-file", secret.toString()));
    args.addAll(List.of(command));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int status =
        AdminMain.run(args.toArray(String[]::new), new PrintWriter(out), new PrintWriter(err));
    return new Run(status, out.toString(), err.toString());
  }

  @Test
  void aMoveAndADecommissionUnderLoadFailNoOperationAndLoseNothing() throws Exception {
    HistoryRecorder recorder = new HistoryRecorder(1 << 20);
    try (ProcessCluster cluster =
            ProcessCluster.start(
                dir.resolve("cluster"),
                "--servers",
                "4",
                "--regions",
                Integer.toString(REGIONS),
                "--replication",
                "3",
                "--l0-size",
                ProcessCluster.SMALL_L0);
        KvsClient client = cluster.client(OPERATION_TIMEOUT)) {
      String zookeeper = cluster.zookeeper();
      secret = cluster.dir().resolve("secret");
      ProcessCluster.awaitFullStrength(client, REGIONS, 3, Duration.ofSeconds(60));
      // Data in every region's device levels: the handovers carry it, verify compares it.
      Bulk.fillLevels(client, "levels", REGIONS);
      byte[] firstKey = RecordedLoad.key("admin", 0);
      RegionDescriptor loaded = client.regionMap().regionFor(firstKey).orElseThrow();
      String target = loaded.backups().get(0);
      String outsider =
          List.of("s1", "s2", "s3", "s4").stream()
              .filter(id -> !loaded.members().contains(id))
              .findFirst()
              .orElseThrow();

      RecordedLoad load =
          RecordedLoad.start(client, recorder, CLIENTS, "admin", KEYS, OPERATION_TIMEOUT);
      load.awaitMore(200, AWAIT);

      Run moved = admin(zookeeper, "move", Long.toString(loaded.id()), target);
      assertThat(moved.status()).as(moved.err()).isZero();
      assertThat(moved.out()).contains("primary " + target);
      ProcessCluster.awaitCondition(
          "region " + loaded.id() + " led by " + target + " in the client's map",
          AWAIT,
          () -> client.regionMap().byId(loaded.id()).orElseThrow().primary().equals(target));
      load.awaitMore(200, AWAIT);

      RegionDescriptor beforeRefusal = client.regionMap().byId(loaded.id()).orElseThrow();
      Run refused = admin(zookeeper, "move", Long.toString(loaded.id()), outsider);
      assertThat(refused.status()).isEqualTo(1);
      assertThat(refused.err()).contains(outsider + " is no member of region " + loaded.id());
      assertThat(admin(zookeeper, "regions").out()).doesNotContain("moving");
      assertThat(client.regionMap().byId(loaded.id()).orElseThrow().epoch())
          .isEqualTo(beforeRefusal.epoch());

      Run drained = admin(zookeeper, "decommission", target);
      assertThat(drained.status()).as(drained.err()).isZero();
      assertThat(drained.out()).contains(target + " holds no region any more");
      ProcessCluster.awaitMovedOn(client, target, AWAIT);
      ProcessCluster.awaitFullStrength(client, REGIONS, 3, AWAIT);
      load.awaitMore(200, AWAIT);
      load.finish();

      ServerInfo drainedServer = LocalStatus.liveServers(zookeeper, "default").get(target);
      try (ControlClient control =
          new ControlClient(
              Duration.ofSeconds(5), SecurityOptions.forClusterDirectory(cluster.dir(), "admin"))) {
        ProcessCluster.awaitCondition(
            target + " closes every region it held",
            AWAIT,
            () ->
                control
                    .call(
                        drainedServer.host(),
                        drainedServer.controlPort(),
                        new ControlCommand.ListRegions())
                    .regions()
                    .isEmpty());
      }
      assertThat(admin(zookeeper, "servers").out()).contains("live, decommissioned");
      Run stats = admin(zookeeper, "stats", Long.toString(loaded.id()));
      assertThat(stats.status()).as(stats.err()).isZero();
      assertThat(stats.out()).contains("puts").doesNotContain("did not answer");
      cluster.verify();
      Run back = admin(zookeeper, "recommission", target);
      assertThat(back.out()).contains(target + " may hold replicas again");
    }
    History history = recorder.history();
    Verdict verdict = RecordedLoad.assertAllSucceeded(history, dir.resolve("history-admin.jsonl"));
    System.out.printf(
        "AdminIT: %d operations, all OK through a move and a decommission; %s%n",
        history.size(), verdict.summary());
  }
}
