package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.History;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.Operation.Outcome;
import io.kvs.bench.history.Verdict;
import io.kvs.client.KvsClient;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionState;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Online merges with real processes (three servers, one region, replication 2, send-index, data in
 * the device levels) while four clients write, delete and read shared keys across the regions
 * merged, every operation recorded. The region is split in three ({@code ./kvs admin split},
 * twice); then {@code ./kvs admin merge} of the lower two races a split of the third; then the
 * merged region is merged with the third's lower daughter, whose leadership an operator moved to
 * another server first (the master gives both one group, then merges); then the merged region's
 * primary is killed ({@code kill -9}) and a backup promoted from its replica. Each merge ends with
 * one open region covering both ranges exactly; every operation begun before the kill succeeded
 * (clients follow by WRONG_REGION and a map refresh), the history is linearizable with no
 * acknowledged write lost, and {@code LocalCluster verify} finds every region's backups holding
 * what its primary holds.
 */
class MergeIT {
  private static final int KEYS = 30;
  private static final int CLIENTS = 4;
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(20);
  private static final Duration AWAIT = Duration.ofSeconds(120);

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  static Path dir;

  /** Runs {@code ./kvs admin} waiting for the command to be done. */
  private static String admin(ProcessCluster cluster, String... command) throws Exception {
    List<String> all = new ArrayList<>(List.of("--wait", Long.toString(AWAIT.toSeconds())));
    all.addAll(List.of(command));
    return cluster.admin(all.toArray(String[]::new));
  }

  /** Merges {@code left} with its neighbour above and checks the map afterwards. */
  private static RegionDescriptor merge(
      ProcessCluster cluster, RegionDescriptor left, RegionDescriptor right) throws Exception {
    long began = System.nanoTime();
    String printed = admin(cluster, "merge", Long.toString(left.id()));
    long millis = (System.nanoTime() - began) / 1_000_000;
    RegionMap map = cluster.regionMap();
    assertThat(map.byId(left.id())).as("the lower region after the merge").isEmpty();
    assertThat(map.byId(right.id())).as("the upper region after the merge").isEmpty();
    List<RegionDescriptor> covering = map.within(left.start(), right.end());
    assertThat(covering).as(printed).hasSize(1);
    RegionDescriptor merged = covering.get(0);
    assertThat(merged.start()).isEqualTo(left.start());
    assertThat(merged.end()).isEqualTo(right.end());
    assertThat(merged.state()).isEqualTo(RegionState.OPEN);
    assertThat(merged.epoch()).isGreaterThan(Math.max(left.epoch(), right.epoch()));
    assertThat(merged.id()).isGreaterThan(Math.max(left.id(), right.id()));
    assertThat(map.isComplete()).as("no hole or overlap: %s", map.regions()).isTrue();
    System.out.printf(
        "MergeIT: merged regions %d and %d in %d ms into %s%n",
        left.id(), right.id(), millis, merged);
    return merged;
  }

  @Test
  void mergedRegionsKeepServingLoseNothingAndSurviveTheirPrimarysKill() throws Exception {
    HistoryRecorder recorder = new HistoryRecorder(1 << 20);
    long killedAt;
    try (ProcessCluster cluster =
            ProcessCluster.start(
                dir.resolve("cluster"),
                "--servers",
                "3",
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
          RecordedLoad.start(client, recorder, CLIENTS, "merge", KEYS, OPERATION_TIMEOUT);
      load.awaitMore(200, AWAIT);

      // Three regions of one group: the load's keys ("merge-key-N") fall in all three.
      admin(cluster, "split", "1", "merge-key-2");
      RegionDescriptor upper = cluster.regionMap().regionFor(bytes("merge-key-2")).orElseThrow();
      admin(cluster, "split", Long.toString(upper.id()), "merge-key-5");
      ProcessCluster.awaitFullStrength(client, 3, 2, AWAIT);
      load.awaitMore(200, AWAIT);
      RegionMap three = cluster.regionMap();
      RegionDescriptor a = three.regionFor(bytes("merge-key-1")).orElseThrow();
      RegionDescriptor b = three.regionFor(bytes("merge-key-3")).orElseThrow();
      RegionDescriptor c = three.regionFor(bytes("merge-key-7")).orElseThrow();
      assertThat(List.of(a.id(), b.id(), c.id())).doesNotHaveDuplicates();

      // A merge of a and b racing a split of c, their neighbour: both end done.
      cluster.admin("merge", Long.toString(a.id()), "--no-wait");
      admin(cluster, "split", Long.toString(c.id()), "merge-key-8");
      RegionDescriptor ab =
          cluster.awaitOneRegion(a.start(), b.end(), AWAIT, "the merge that raced a split");
      load.awaitMore(200, AWAIT);
      ProcessCluster.awaitFullStrength(client, 3, 2, AWAIT);
      RegionMap now = cluster.regionMap();
      RegionDescriptor lowerOfC = now.regionFor(bytes("merge-key-7")).orElseThrow();
      assertThat(lowerOfC.id()).isNotEqualTo(c.id());

      // The merged region merged again, with the lower daughter of c, led by another server first:
      // the master hands one's leadership to the other's primary, then merges them.
      // (The balancer stays off from here: it could hand the leadership back before the merge.)
      admin(cluster, "balancer", "off");
      admin(cluster, "move", Long.toString(lowerOfC.id()), lowerOfC.backups().get(0));
      ProcessCluster.awaitFullStrength(client, 3, 2, AWAIT);
      load.awaitMore(200, AWAIT);
      RegionMap moved = cluster.regionMap();
      RegionDescriptor abNow = moved.byId(ab.id()).orElseThrow();
      RegionDescriptor lowerOfCNow = moved.byId(lowerOfC.id()).orElseThrow();
      assertThat(lowerOfCNow.primary()).as("led by another server").isNotEqualTo(abNow.primary());
      assertThat(lowerOfCNow.sameMembersAs(abNow)).as("held by the same servers").isTrue();
      RegionDescriptor merged = merge(cluster, abNow, lowerOfCNow);
      load.awaitMore(200, AWAIT);

      // Once its backup caught up (send-index re-replicates a merged region), its primary killed:
      // the backup is promoted from its replica.
      ProcessCluster.awaitFullStrength(client, 2, 2, AWAIT);
      RegionDescriptor victim = cluster.regionMap().byId(merged.id()).orElseThrow();
      RegionMap before = cluster.regionMap();
      killedAt = System.nanoTime();
      cluster.inject("kill", victim.primary());
      ProcessCluster.awaitMovedOn(client, victim.primary(), AWAIT);
      load.awaitMore(200, AWAIT);
      cluster.inject("restart", victim.primary());
      ProcessCluster.awaitFullStrengthAfter(client, before, 2, 2, AWAIT);
      load.awaitMore(200, AWAIT);
      load.finish();
      cluster.verify();
    }
    History history = recorder.history();
    Verdict verdict = RecordedLoad.check(history, dir.resolve("history-merge.jsonl"));
    assertThat(verdict.isLinearizable()).as(verdict.describe()).isTrue();
    assertThat(verdict.lostWrites()).isEmpty();
    List<String> failed =
        history.operations().stream()
            .filter(operation -> operation.outcome() != Outcome.OK)
            .filter(operation -> operation.invokeNanos() < killedAt)
            .map(Object::toString)
            .limit(5)
            .toList();
    assertThat(failed).as("operations begun before the kill that did not succeed").isEmpty();
    long[] latencies =
        history.operations().stream()
            .filter(operation -> operation.invokeNanos() < killedAt)
            .filter(operation -> operation.outcome() == Outcome.OK)
            .mapToLong(operation -> operation.completeNanos() - operation.invokeNanos())
            .sorted()
            .toArray();
    System.out.printf(
        "MergeIT: %d operations, all begun before the kill OK; latency before the kill p50 %.2f ms,"
            + " max %.1f ms; %s%n",
        history.size(),
        latencies[latencies.length / 2] / 1e6,
        latencies[latencies.length - 1] / 1e6,
        verdict.summary());
  }

  private static byte[] bytes(String key) {
    return key.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }
}
