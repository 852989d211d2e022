package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.History;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Operation.Outcome;
import io.kvs.bench.history.Verdict;
import io.kvs.client.KvsClient;
import io.kvs.core.cli.Processes;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.tools.fault.NetworkCut;
import io.kvs.tools.fault.ProcessSockets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * A primary cut off from both of its backups (iptables drops its traffic to every port of theirs,
 * {@link NetworkCut}) under a recorded load, at the default durability ({@code flush}: each
 * server's logs reach its device every 50 ms) and the default minimum of one replica: both streams
 * fail after the stall timeout, the master reopens the region with both backups joining, and the
 * primary goes on alone. Then it is killed (kill -9) while it acknowledges writes alone, and
 * restarted: with no backup in sync the region waits for it, and it leads again from its disk.
 *
 * <p>The load writes every key once ({@link WriteOnceLoad}), so no later write hides a lost one,
 * and every key is read once after the group is whole again. Checked: writes to the region were
 * acknowledged while it was alone, some within the flush interval before the kill (what the check
 * could lose); no acknowledged write is lost; the history is linearizable; {@code LocalCluster
 * verify} passes. Before writes of a group left alone waited for the primary's disk, this lost the
 * writes of the last flush interval (the 60-minute chaos profile's violation).
 */
class AlonePrimaryIT {
  private static final int REGIONS = 2;
  private static final int CLIENTS = 4;
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(5);
  private static final Duration AWAIT = Duration.ofSeconds(120);

  /** The default durability's flush interval: a write acknowledged within it could be lost. */
  private static final Duration FLUSH_INTERVAL = Duration.ofMillis(50);

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  @Test
  void aPrimaryLeftAloneAndKilledLosesNoAcknowledgedWrite() throws Exception {
    assertThat(NetworkCut.unavailable()).as("cutting a process's traffic (iptables)").isEmpty();
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
      RegionMap before;
      RegionDescriptor region;
      long aloneAt;
      long killedAt;
      try (KvsClient client = cluster.client(OPERATION_TIMEOUT)) {
        ProcessCluster.awaitFullStrength(client, REGIONS, 3, Duration.ofSeconds(60));
        Bulk.fillLevels(client, "levels", REGIONS);
        before = client.regionMap();
        region = before.regionFor(TestKeys.key("alone-0", 0)).orElseThrow();
        WriteOnceLoad load =
            WriteOnceLoad.start(client, recorder, CLIENTS, "alone", OPERATION_TIMEOUT);
        load.awaitMore(200, AWAIT);
        ProcessHandle primary = cluster.process("server-" + region.primary());
        List<Integer> backupPorts = new ArrayList<>();
        for (String backup : region.backups()) {
          backupPorts.addAll(
              ProcessSockets.listeningPorts(cluster.process("server-" + backup).pid()));
        }
        NetworkCut cut = NetworkCut.cut(primary, backupPorts);
        try {
          ProcessCluster.awaitCondition(
              "region " + region.id() + " reopened with every backup joining",
              Duration.ofSeconds(60),
              () ->
                  client
                      .regionMap()
                      .byId(region.id())
                      .map(
                          now ->
                              now.epoch() > region.epoch()
                                  && now.primary().equals(region.primary())
                                  && now.joining().containsAll(region.backups()))
                      .orElse(false));
          aloneAt = System.nanoTime();
          ProcessCluster.awaitCondition(
              "100 writes to region " + region.id() + " acknowledged by its primary alone",
              AWAIT,
              () ->
                  acknowledged(recorder.history(), before, region.id(), aloneAt, System.nanoTime())
                      >= 100);
          killedAt = System.nanoTime();
          primary.destroyForcibly(); // SIGKILL, while it acknowledges writes alone
          assertThat(Processes.awaitExit(primary, Duration.ofSeconds(30))).isTrue();
        } finally {
          cut.close();
        }
        load.stop();
        cluster.startServer(region.primary());
        ProcessCluster.awaitFullStrengthAfter(client, before, REGIONS, 3, Duration.ofSeconds(120));
        load.readAll();
      }
      History history = recorder.history();
      Verdict verdict = RecordedLoad.check(history, dir.resolve("history.jsonl"));
      List<Duration> lost = WriteOnceLoad.lostWrites(history, killedAt, CLIENTS);
      long alone = acknowledged(history, before, region.id(), aloneAt, killedAt);
      long lastInterval =
          acknowledged(history, before, region.id(), killedAt - FLUSH_INTERVAL.toNanos(), killedAt);
      System.out.printf(
          "AlonePrimaryIT (region %d, %s cut off from %s, then killed): %d operations; %d writes"
              + " acknowledged while it was alone, %d within %d ms of the kill; acknowledged"
              + " writes lost: %d %s; %s%n",
          region.id(),
          region.primary(),
          region.backups(),
          history.size(),
          alone,
          lastInterval,
          FLUSH_INTERVAL.toMillis(),
          lost.size(),
          lost.stream().map(Duration::toMillis).sorted().limit(10).toList() + " ms before the kill",
          verdict.summary());
      assertThat(lastInterval)
          .as("writes acknowledged within the flush interval before the kill, which it could lose")
          .isPositive();
      assertThat(lost).as("acknowledged writes lost (ms before the kill)").isEmpty();
      assertThat(verdict.isLinearizable()).as(verdict.describe()).isTrue();
      cluster.verify();
    }
  }

  /** Writes to region {@code regionId} (as {@code map} places keys) acknowledged in [from, to]. */
  private static long acknowledged(
      History history, RegionMap map, long regionId, long from, long to) {
    return history.operations().stream()
        .filter(op -> op.kind() != Kind.GET && op.outcome() == Outcome.OK)
        .filter(op -> op.completeNanos() >= from && op.completeNanos() <= to)
        .filter(op -> map.regionFor(op.key().toArray()).map(r -> r.id() == regionId).orElse(false))
        .count();
  }
}
