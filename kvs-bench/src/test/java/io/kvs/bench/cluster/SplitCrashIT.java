package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.History;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.Verdict;
import io.kvs.client.KvsClient;
import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.ControlClient;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlReply;
import io.kvs.core.security.SecurityOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Splits crashed at their two dangerous points, with real processes and {@code kill -9} (three
 * servers, two masters, two regions, replication 2, send-index) while four clients write, delete
 * and read shared keys of the regions split, every operation recorded:
 *
 * <ol>
 *   <li>the active master killed between the seal and the commit: the parent's primary is sealed
 *       (stops serving the parent) by a seal sent as the master sends it, and the master killed
 *       right after, with nobody left to commit. The standby takes over, finds the parent not held
 *       by its primary and reopens it (a backup in sync promoted), and splits it once it is quiet
 *       again: the daughters come at least two epochs after the parent.
 *   <li>the primary of fresh daughters killed while their backups may still be catching up (under
 *       send-index on what the primary's split merged into its levels, so until then it alone holds
 *       them): they wait for it, and its restart splits nothing twice and loses nothing.
 * </ol>
 *
 * Checked: the history is linearizable with no acknowledged write lost, the map covers the key
 * space with no hole or overlap, and {@code LocalCluster verify} finds every region's backups
 * holding what its primary holds.
 */
class SplitCrashIT {
  private static final int REGIONS = 2;
  private static final int KEYS = 20;
  private static final int CLIENTS = 4;
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(20);
  private static final Duration AWAIT = Duration.ofSeconds(120);

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  static Path dir;

  @Test
  void splitsCrashedAtTheirDangerousPointsEndWithTheParentOrItsDaughtersAndLoseNothing()
      throws Exception {
    HistoryRecorder recorder = new HistoryRecorder(1 << 20);
    try (ProcessCluster cluster =
            ProcessCluster.start(
                dir.resolve("cluster"),
                "--servers",
                "3",
                "--masters",
                "2",
                "--regions",
                Integer.toString(REGIONS),
                "--replication",
                "2",
                "--l0-size",
                ProcessCluster.SMALL_L0);
        KvsClient client = cluster.client(OPERATION_TIMEOUT)) {
      ProcessCluster.awaitFullStrength(client, REGIONS, 2, Duration.ofSeconds(60));
      Bulk.fillLevels(client, "levels", REGIONS);
      RecordedLoad load =
          RecordedLoad.start(client, recorder, CLIENTS, "crash", KEYS, OPERATION_TIMEOUT);
      load.awaitMore(200, AWAIT);

      // 1. The master killed between the seal and the commit: the seal is sent here, as the
      // master sends it, and the active master killed right after, before it could commit.
      RegionDescriptor parent =
          cluster.regionMap().regionFor(RecordedLoad.key("crash", 0)).orElseThrow();
      String master = cluster.awaitActiveMaster(AWAIT);
      ServerInfo primary = cluster.servers().get(parent.primary());
      try (ControlClient control =
          new ControlClient(
              Duration.ofSeconds(30),
              SecurityOptions.forClusterDirectory(cluster.dir(), "admin"))) {
        ControlReply sealed =
            control.call(
                primary.host(),
                primary.controlPort(),
                new ControlCommand.Seal(parent.id(), parent.epoch(), Keys.utf8("crash-key-15")));
        assertThat(sealed.isOk()).as(sealed.message()).isTrue();
      }
      cluster.inject("kill", master);
      cluster.admin("split", Long.toString(parent.id()), "crash-key-15", "--no-wait");
      ProcessCluster.awaitCondition(
          "region " + parent.id() + " split by the standby into two open daughters",
          AWAIT,
          () -> {
            RegionMap map = cluster.mapNow();
            List<RegionDescriptor> daughters = map.within(parent.start(), parent.end());
            return map.byId(parent.id()).isEmpty()
                && daughters.size() == 2
                && daughters.stream().allMatch(d -> d.state() == RegionState.OPEN);
          });
      List<RegionDescriptor> first = cluster.regionMap().within(parent.start(), parent.end());
      for (RegionDescriptor daughter : first) {
        // Reopened by the standby (its primary had sealed it) before it was split.
        assertThat(daughter.epoch()).isGreaterThanOrEqualTo(parent.epoch() + 2);
      }
      assertThat(first.get(1).start()).isEqualTo(Keys.utf8("crash-key-15"));
      System.out.printf("SplitCrashIT: the standby split region %d into %s%n", parent.id(), first);
      load.awaitMore(200, AWAIT);
      cluster.inject("restart", master);

      // 2. The daughters' primary killed while their backups catch up.
      ProcessCluster.awaitFullStrength(client, REGIONS + 1, 2, AWAIT);
      RegionDescriptor second = cluster.regionMap().byId(first.get(0).id()).orElseThrow();
      cluster.admin(
          "--wait",
          Long.toString(AWAIT.toSeconds()),
          "split",
          Long.toString(second.id()),
          "crash-key-10");
      RegionMap split = cluster.regionMap();
      List<RegionDescriptor> daughters = split.within(second.start(), second.end());
      assertThat(daughters).hasSize(2);
      String victim = daughters.get(0).primary();
      cluster.inject("kill", victim);
      cluster.inject("restart", victim);
      // The regions the victim was a member of move past their epoch; one it was not (the
      // balancer may have left it off a region) has no reason to.
      RegionMap itsRegions =
          RegionMap.of(split.regions().stream().filter(r -> r.members().contains(victim)).toList());
      ProcessCluster.awaitFullStrengthAfter(client, itsRegions, REGIONS + 2, 2, AWAIT);
      RegionMap end = cluster.regionMap();
      assertThat(end.isComplete()).as("the key space covered: %s", end.regions()).isTrue();
      assertThat(end.size()).isEqualTo(REGIONS + 2);
      load.awaitMore(200, AWAIT);
      load.finish();
      cluster.verify();
    }
    History history = recorder.history();
    Verdict verdict = RecordedLoad.check(history, dir.resolve("history-split-crash.jsonl"));
    assertThat(verdict.isLinearizable()).as(verdict.describe()).isTrue();
    assertThat(verdict.lostWrites()).isEmpty();
    System.out.printf("SplitCrashIT: %d operations; %s%n", history.size(), verdict.summary());
  }
}
