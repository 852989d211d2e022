package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.History;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.Operation.Outcome;
import io.kvs.bench.history.Verdict;
import io.kvs.client.KvsClient;
import io.kvs.core.cluster.Keys;
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
 * Online splits with real processes (three servers, two regions, replication 2, send-index, data in
 * the device levels) while four clients write, delete and read shared keys of the region split,
 * every operation recorded: {@code ./kvs admin split} at a given key, then at the median its
 * primary picks, each ending with both daughters open and covering the parent's range exactly; then
 * the primary of a daughter is killed ({@code kill -9}) and a backup promoted from its replica
 * (whose levels, shipped from the parent's, hold its sibling's keys too). Every operation of the
 * load succeeded (clients follow the split by WRONG_REGION and a map refresh), the history is
 * linearizable with no acknowledged write lost, and {@code LocalCluster verify} finds every
 * daughter's backups holding what its primary holds.
 */
class SplitIT {
  private static final int REGIONS = 2;
  private static final int KEYS = 20;
  private static final int CLIENTS = 4;
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(20);
  private static final Duration AWAIT = Duration.ofSeconds(120);

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  static Path dir;

  /** Splits {@code parent} (at {@code key}, or the median) and checks the map afterwards. */
  private static List<RegionDescriptor> split(
      ProcessCluster cluster, RegionDescriptor parent, String... key) throws Exception {
    List<String> command =
        new ArrayList<>(List.of("--wait", Long.toString(AWAIT.toSeconds()), "split"));
    command.add(Long.toString(parent.id()));
    command.addAll(List.of(key));
    long began = System.nanoTime();
    String printed = cluster.admin(command.toArray(String[]::new));
    long millis = (System.nanoTime() - began) / 1_000_000;
    RegionMap map = cluster.regionMap();
    assertThat(map.byId(parent.id())).as("the parent after its split").isEmpty();
    List<RegionDescriptor> daughters = map.within(parent.start(), parent.end());
    assertThat(daughters).as(printed).hasSize(2);
    RegionDescriptor lower = daughters.get(0);
    RegionDescriptor upper = daughters.get(1);
    assertThat(lower.start()).isEqualTo(parent.start());
    assertThat(lower.end()).isEqualTo(upper.start());
    assertThat(upper.end()).isEqualTo(parent.end());
    if (key.length > 0) {
      assertThat(upper.start()).isEqualTo(Keys.utf8(key[0]));
    }
    for (RegionDescriptor daughter : daughters) {
      assertThat(daughter.state()).isEqualTo(RegionState.OPEN);
      assertThat(daughter.epoch()).isGreaterThan(parent.epoch());
      assertThat(daughter.id()).isGreaterThan(parent.id());
    }
    System.out.printf(
        "SplitIT: split region %d %s in %d ms into %s and %s%n",
        parent.id(), parent.rangeText(), millis, lower, upper);
    return daughters;
  }

  @Test
  void splitRegionsKeepServingLoseNothingAndSurviveTheirPrimarysKill() throws Exception {
    HistoryRecorder recorder = new HistoryRecorder(1 << 20);
    long killedAt;
    try (ProcessCluster cluster =
            ProcessCluster.start(
                dir.resolve("cluster"),
                "--servers",
                "3",
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
          RecordedLoad.start(client, recorder, CLIENTS, "split", KEYS, OPERATION_TIMEOUT);
      load.awaitMore(200, AWAIT);
      byte[] loaded = RecordedLoad.key("split", 0);
      RegionDescriptor parent = cluster.regionMap().regionFor(loaded).orElseThrow();

      // At a key: the load's keys fall on both sides of it.
      List<RegionDescriptor> first = split(cluster, parent, "split-key-15");
      load.awaitMore(200, AWAIT);
      // At the middle of the lower daughter by size, which its primary picks.
      List<RegionDescriptor> second = split(cluster, first.get(0));
      load.awaitMore(200, AWAIT);
      assertThat(cluster.regionMap().size()).isEqualTo(REGIONS + 2);

      // Once the daughters' backups caught up (send-index re-replicates them: until then their
      // primary alone holds them), a daughter's primary killed: a backup is promoted from its
      // replica.
      ProcessCluster.awaitFullStrength(client, REGIONS + 2, 2, AWAIT);
      RegionDescriptor victim = cluster.regionMap().byId(second.get(1).id()).orElseThrow();
      RegionMap before = cluster.regionMap();
      killedAt = System.nanoTime();
      cluster.inject("kill", victim.primary());
      ProcessCluster.awaitMovedOn(client, victim.primary(), AWAIT);
      load.awaitMore(200, AWAIT);
      cluster.inject("restart", victim.primary());
      ProcessCluster.awaitFullStrengthAfter(client, before, REGIONS + 2, 2, AWAIT);
      load.awaitMore(200, AWAIT);
      load.finish();
      cluster.verify();
    }
    History history = recorder.history();
    Verdict verdict = RecordedLoad.check(history, dir.resolve("history-split.jsonl"));
    assertThat(verdict.isLinearizable()).as(verdict.describe()).isTrue();
    assertThat(verdict.lostWrites()).isEmpty();
    // The splits are planned: they cost clients retries, never an error. The kill may leave the
    // outcome of writes in flight on the victim unknown.
    List<String> failed =
        history.operations().stream()
            .filter(operation -> operation.outcome() != Outcome.OK)
            .filter(operation -> operation.invokeNanos() < killedAt)
            .map(Object::toString)
            .limit(5)
            .toList();
    assertThat(failed).as("operations begun before the kill that did not succeed").isEmpty();
    // What a split costs clients: the longest operation before the kill (it waited through a seal,
    // the commit and the daughters' opens), against the median.
    long[] latencies =
        history.operations().stream()
            .filter(operation -> operation.invokeNanos() < killedAt)
            .filter(operation -> operation.outcome() == Outcome.OK)
            .mapToLong(operation -> operation.completeNanos() - operation.invokeNanos())
            .sorted()
            .toArray();
    System.out.printf(
        "SplitIT: %d operations, all begun before the kill OK; latency before the kill p50 %.2f ms,"
            + " max %.1f ms; %s%n",
        history.size(),
        latencies[latencies.length / 2] / 1e6,
        latencies[latencies.length - 1] / 1e6,
        verdict.summary());
  }
}
