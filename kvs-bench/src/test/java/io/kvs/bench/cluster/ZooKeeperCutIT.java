package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.History;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.Verdict;
import io.kvs.client.KvsClient;
import io.kvs.core.cli.Processes;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.tools.fault.NetworkCut;
import io.kvs.tools.local.LocalStatus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * A primary cut off from ZooKeeper while its clients still reach it (a partition between a server
 * and the coordination service, the case fencing exists for): iptables drops its traffic to
 * ZooKeeper's port ({@link NetworkCut}); nothing else changes. Its lease lapses before its session
 * can expire, so it stops answering; the master promotes a backup once the session expires; when
 * the cut heals the server finds its session gone, closes its regions and rejoins as a backup.
 *
 * <p>The load's four threads each use a client of their own (own connections, own region map), so
 * each finds out on its own that the group moved on, and clients whose maps still name the cut-off
 * primary keep going to it. Checked: some did, and it refused them (its {@code /metrics} count
 * NOT_PRIMARY replies during the cut); the recorded history is linearizable with no acknowledged
 * write lost (so the cut-off primary acknowledged nothing after its group moved on, and served no
 * stale read); the cluster acknowledges writes while it is cut off; the groups are whole again
 * after, and {@code LocalCluster verify} passes with data in every region's device levels. Fails,
 * saying why, where iptables or cgroups are not usable: this machine can cut traffic, and a test
 * that skips itself checks nothing.
 */
class ZooKeeperCutIT {
  private static final int REGIONS = 2;
  private static final int KEYS = 20;
  private static final int CLIENTS = 4;
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(5);
  private static final Duration AWAIT = Duration.ofSeconds(120);

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  @Test
  void aPrimaryCutOffFromZooKeeperStopsAnsweringAndItsGroupMovesOn() throws Exception {
    Optional<String> unavailable = NetworkCut.unavailable();
    assertThat(unavailable)
        .as(
            "cutting a process off from ZooKeeper (root, iptables with the cgroup match, cgroup v2)")
        .isEmpty();
    try (ProcessCluster cluster =
        ProcessCluster.start(
            dir.resolve("cluster"),
            "--servers",
            "3",
            "--regions",
            Integer.toString(REGIONS),
            "--replication",
            "3",
            "--l0-size",
            ProcessCluster.SMALL_L0)) {
      HistoryRecorder recorder = new HistoryRecorder(1 << 20);
      String victim;
      long servedWithout;
      double refused;
      try (KvsClient client = cluster.client(OPERATION_TIMEOUT)) {
        ProcessCluster.awaitFullStrength(client, REGIONS, 3, Duration.ofSeconds(60));
        Bulk.fillLevels(client, "levels", REGIONS);
        // The primary of the loaded keys' region.
        victim =
            client.regionMap().regionFor(RecordedLoad.key("history", 0)).orElseThrow().primary();
        ServerInfo victimInfo = LocalStatus.liveServers(cluster.zookeeper(), "default").get(victim);
        int zookeeperPort =
            Integer.parseInt(
                cluster.zookeeper().substring(cluster.zookeeper().lastIndexOf(':') + 1));
        RecordedLoad load =
            RecordedLoad.startIndependent(
                client,
                () -> cluster.client(OPERATION_TIMEOUT),
                recorder,
                CLIENTS,
                "history",
                KEYS,
                OPERATION_TIMEOUT);
        load.awaitMore(200, AWAIT);
        double refusedBefore = Scrape.refusals(victimInfo.httpPort());
        ProcessHandle server = cluster.process("server-" + victim);
        NetworkCut cut = NetworkCut.cut(server, java.util.List.of(zookeeperPort));
        try {
          ProcessCluster.awaitMovedOn(client, victim, Duration.ofSeconds(60));
          assertThat(Processes.running(server)).as(victim + " still runs, cut off").isTrue();
          int before = load.acknowledged();
          load.awaitMore(200, AWAIT);
          servedWithout = load.acknowledged() - before;
        } finally {
          cut.close(); // the cut heals
        }
        // Its counters reach /metrics within a second (the server reads them once a second).
        ProcessCluster.awaitCondition(
            victim + " counts the requests it refused while cut off",
            Duration.ofSeconds(10),
            () -> Scrape.refusals(victimInfo.httpPort()) > refusedBefore);
        refused = Scrape.refusals(victimInfo.httpPort()) - refusedBefore;
        ProcessCluster.awaitFullStrength(client, REGIONS, 3, Duration.ofSeconds(90));
        assertThat(client.regionMap().regions().stream().map(RegionDescriptor::members))
            .allMatch(members -> members.contains(victim));
        load.awaitMore(200, AWAIT);
        load.finish();
      }
      History history = recorder.history();
      Verdict verdict = RecordedLoad.check(history, dir.resolve("history.jsonl"));
      System.out.printf(
          "ZooKeeperCutIT (%s cut off): %d operations, %d acknowledged while it was cut off, %.0f"
              + " requests it refused as NOT_PRIMARY; %s%n",
          victim, history.size(), servedWithout, refused, verdict.summary());
      assertThat(verdict.isLinearizable()).as(verdict.describe()).isTrue();
      assertThat(verdict.lostWrites()).isEmpty();
      cluster.verify();
    }
  }
}
