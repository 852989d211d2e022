package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.History;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.Verdict;
import io.kvs.client.KvsClient;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
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
 * Merges crashed at their two dangerous points, with real processes and {@code kill -9} (three
 * servers, two masters, one region split in two, replication 2, send-index) while four clients
 * write, delete and read shared keys of both regions, every operation recorded:
 *
 * <ol>
 *   <li>the active master killed between the retire and the commit: both regions' primary is told
 *       to retire them (stops serving them) by retires sent as the master sends them, and the
 *       master killed right after, with nobody left to commit. The standby takes over, finds both
 *       not held by their primary and reopens them, and merges them once they are quiet again: the
 *       merged region comes at least two epochs after them.
 *   <li>the primary of the fresh merged region killed while its backup is still catching up (under
 *       send-index the merged region is re-replicated, so it alone holds it): it waits for it, and
 *       its restart merges nothing twice and loses nothing.
 * </ol>
 *
 * Checked: the history is linearizable with no acknowledged write lost, the map covers the key
 * space with no hole or overlap, and {@code LocalCluster verify} finds every region's backups
 * holding what its primary holds.
 */
class MergeCrashIT {
  private static final int KEYS = 20;
  private static final int CLIENTS = 4;
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(20);
  private static final Duration AWAIT = Duration.ofSeconds(120);

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  static Path dir;

  @Test
  void mergesCrashedAtTheirDangerousPointsEndWithBothRegionsOrTheMergedOneAndLoseNothing()
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
                "1",
                "--replication",
                "2",
                "--l0-size",
                ProcessCluster.SMALL_L0);
        KvsClient client = cluster.client(OPERATION_TIMEOUT)) {
      ProcessCluster.awaitFullStrength(client, 1, 2, Duration.ofSeconds(60));
      Bulk.fillLevels(client, "levels", 1);
      RecordedLoad load =
          RecordedLoad.start(client, recorder, CLIENTS, "crash", KEYS, OPERATION_TIMEOUT);
      load.awaitMore(200, AWAIT);
      cluster.admin("--wait", Long.toString(AWAIT.toSeconds()), "split", "1", "crash-key-15");
      ProcessCluster.awaitFullStrength(client, 2, 2, AWAIT);
      load.awaitMore(200, AWAIT);

      // 1. The master killed between the retire and the commit: the retires are sent here, as the
      // master sends them, and the active master killed right after, before it could commit.
      RegionMap two = cluster.regionMap();
      RegionDescriptor left = two.regionFor(RecordedLoad.key("crash", 0)).orElseThrow();
      RegionDescriptor right = two.regionFor(RecordedLoad.key("crash", 15)).orElseThrow();
      assertThat(left.end()).isEqualTo(right.start());
      String master = cluster.awaitActiveMaster(AWAIT);
      ServerInfo primary = cluster.servers().get(left.primary());
      try (ControlClient control =
          new ControlClient(
              Duration.ofSeconds(30),
              SecurityOptions.forClusterDirectory(cluster.dir(), "admin"))) {
        for (RegionDescriptor region : List.of(left, right)) {
          ControlReply retired =
              control.call(
                  primary.host(),
                  primary.controlPort(),
                  new ControlCommand.Retire(region.id(), region.epoch()));
          assertThat(retired.isOk()).as(retired.message()).isTrue();
        }
      }
      cluster.inject("kill", master);
      cluster.admin("merge", Long.toString(left.id()), "--no-wait");
      RegionDescriptor merged =
          cluster.awaitOneRegion(
              left.start(), right.end(), AWAIT, "both regions merged by the standby");
      // Reopened by the standby (their primary had retired them) before they were merged.
      assertThat(merged.epoch()).isGreaterThanOrEqualTo(Math.max(left.epoch(), right.epoch()) + 2);
      System.out.printf(
          "MergeCrashIT: the standby merged regions %d and %d into %s%n",
          left.id(), right.id(), merged);
      load.awaitMore(200, AWAIT);
      cluster.inject("restart", master);

      // 2. The merged region's primary killed while its backup catches up.
      ProcessCluster.awaitFullStrength(client, 1, 2, AWAIT);
      cluster.admin(
          "--wait",
          Long.toString(AWAIT.toSeconds()),
          "split",
          Long.toString(merged.id()),
          "crash-key-15");
      RegionMap split = cluster.regionMap();
      RegionDescriptor lower = split.regionFor(RecordedLoad.key("crash", 0)).orElseThrow();
      ProcessCluster.awaitFullStrength(client, 2, 2, AWAIT);
      cluster.admin("--wait", Long.toString(AWAIT.toSeconds()), "merge", Long.toString(lower.id()));
      RegionMap again = cluster.regionMap();
      assertThat(again.size()).isEqualTo(1);
      String victim = again.regions().get(0).primary();
      cluster.inject("kill", victim);
      cluster.inject("restart", victim);
      ProcessCluster.awaitFullStrengthAfter(client, again, 1, 2, AWAIT);
      RegionMap end = cluster.regionMap();
      assertThat(end.isComplete()).as("the key space covered: %s", end.regions()).isTrue();
      assertThat(end.size()).isEqualTo(1);
      load.awaitMore(200, AWAIT);
      load.finish();
      cluster.verify();
    }
    History history = recorder.history();
    Verdict verdict = RecordedLoad.check(history, dir.resolve("history-merge-crash.jsonl"));
    assertThat(verdict.isLinearizable()).as(verdict.describe()).isTrue();
    assertThat(verdict.lostWrites()).isEmpty();
    System.out.printf("MergeCrashIT: %d operations; %s%n", history.size(), verdict.summary());
  }
}
