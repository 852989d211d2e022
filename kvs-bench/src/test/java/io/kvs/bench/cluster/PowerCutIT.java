package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.History;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Operation.Outcome;
import io.kvs.bench.history.Verdict;
import io.kvs.client.KvsClient;
import io.kvs.core.cli.Processes;
import io.kvs.core.cluster.RegionMap;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every region server killed at once (a power cut) under a recorded load, then all restarted: with
 * three servers at replication 3, every replica of every region loses what it held in memory.
 *
 * <p>The load writes every key once ({@link WriteOnceLoad}), so that no later write hides a lost
 * one, and stops at the cut; every key is read once right after the groups are whole again: an
 * acknowledged write that did not survive shows in its key's final read. Checked, for synchronous
 * durability ({@code --durability sync}): no acknowledged write is lost and the history is
 * linearizable. For the default ({@code flush}: each server's logs reach its device every 50 ms):
 * every write lost was acknowledged within {@link #FLUSH_WINDOW} of the cut (the flush interval,
 * the flush's own device latency on this virtual disk, and the kill of three processes one after
 * the other); the history is not required to be linearizable, since reads may have seen those
 * writes. In both, the load was writing up to the cut (so the check had writes to lose), every
 * group is whole again after the restart, the old primaries leading (a restarted backup lost what
 * had landed in its memory, so it is not promoted), and {@code LocalCluster verify} passes with
 * data in every region's device levels.
 */
class PowerCutIT {
  private static final int REGIONS = 2;
  private static final int CLIENTS = 4;
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(5);
  private static final Duration AWAIT = Duration.ofSeconds(120);

  /** The loss the default durability may show: 50 ms flushes, with room for device stalls. */
  private static final Duration FLUSH_WINDOW = Duration.ofSeconds(1);

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  @ParameterizedTest(name = "durability {0}")
  @ValueSource(strings = {"sync", "flush"})
  void everyServerKilledAtOnceLosesAtMostTheFlushWindow(String durability) throws Exception {
    String[] servers = {"s1", "s2", "s3"};
    try (ProcessCluster cluster =
        ProcessCluster.start(
            dir.resolve("cluster-" + durability),
            "--servers",
            "3",
            "--regions",
            Integer.toString(REGIONS),
            "--replication",
            "3",
            "--durability",
            durability,
            "--l0-size",
            ProcessCluster.SMALL_L0)) {
      HistoryRecorder recorder = new HistoryRecorder(1 << 20);
      long cutNanos;
      int keys;
      try (KvsClient client = cluster.client(OPERATION_TIMEOUT)) {
        ProcessCluster.awaitFullStrength(client, REGIONS, 3, Duration.ofSeconds(60));
        Bulk.fillLevels(client, "levels", REGIONS);
        WriteOnceLoad load =
            WriteOnceLoad.start(
                client, recorder, CLIENTS, "power-" + durability, OPERATION_TIMEOUT);
        load.awaitMore(500, AWAIT);
        List<ProcessHandle> processes = new ArrayList<>();
        for (String server : servers) {
          processes.add(cluster.process("server-" + server));
        }
        RegionMap before = client.regionMap();
        cutNanos = System.nanoTime();
        processes.forEach(ProcessHandle::destroyForcibly); // SIGKILL, one right after the other
        for (ProcessHandle process : processes) {
          assertThat(Processes.awaitExit(process, Duration.ofSeconds(30))).isTrue();
        }
        // The writes in flight fail; every key the load wrote is read once the groups are whole.
        load.stop();
        for (String server : servers) {
          cluster.startServer(server, "--durability", durability);
        }
        ProcessCluster.awaitFullStrengthAfter(client, before, REGIONS, 3, Duration.ofSeconds(120));
        keys = load.readAll();
      }
      History history = recorder.history();
      Verdict verdict =
          RecordedLoad.check(history, dir.resolve("history-" + durability + ".jsonl"));
      List<Duration> lost = WriteOnceLoad.lostWrites(history, cutNanos, CLIENTS);
      long lastSecond = acknowledgedWithin(history, cutNanos, FLUSH_WINDOW);
      System.out.printf(
          "PowerCutIT %s: %d operations, %d keys read after the restart, %d writes acknowledged"
              + " within %d ms before the cut; acknowledged writes lost: %d %s; %s%n",
          durability,
          history.size(),
          keys,
          lastSecond,
          FLUSH_WINDOW.toMillis(),
          lost.size(),
          lost.stream().map(Duration::toMillis).sorted().limit(10).toList() + " ms before the cut",
          verdict.summary());
      assertThat(lastSecond)
          .as("writes acknowledged just before the cut, which it could lose")
          .isPositive();
      if (durability.equals("sync")) {
        assertThat(lost).as("acknowledged writes lost (ms before the cut)").isEmpty();
        assertThat(verdict.isLinearizable()).as(verdict.describe()).isTrue();
      } else {
        assertThat(lost)
            .as("acknowledged writes lost (how long before the cut they were acknowledged)")
            .allSatisfy(age -> assertThat(age).isLessThanOrEqualTo(FLUSH_WINDOW));
      }
      cluster.verify();
    }
  }

  /** Writes (puts and deletes) acknowledged within {@code window} before {@code cutNanos}. */
  private static long acknowledgedWithin(History history, long cutNanos, Duration window) {
    return history.operations().stream()
        .filter(operation -> operation.kind() != Kind.GET && operation.outcome() == Outcome.OK)
        .filter(operation -> operation.completeNanos() <= cutNanos)
        .filter(operation -> cutNanos - operation.completeNanos() <= window.toNanos())
        .count();
  }
}
