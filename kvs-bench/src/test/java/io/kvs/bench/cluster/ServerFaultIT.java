package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.History;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.Operation.Outcome;
import io.kvs.bench.history.Verdict;
import io.kvs.client.KvsClient;
import io.kvs.core.cluster.RegionDescriptor;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Faults for real, checked on the clients' recorded history: with three region servers at
 * replication 3, a primary or a backup (a server leading no region) is killed with SIGKILL and
 * restarted, or paused with SIGSTOP past its 4 s session timeout and resumed; at replication 2 a
 * primary is killed (its groups shrink to one member, then heal on the third server while it is
 * away); at replication 3 a primary's replication thread, or a backup's replication stream loop,
 * alone is stopped for good (ptrace, {@link FrozenThread}), which its watchdog must notice,
 * stopping the server so that the master moves its regions (it is then restarted); all while four
 * clients write, delete and read twenty shared keys. The scenarios of one replication factor share
 * a cluster, each on keys of its own, and each leaves it whole. Every operation is recorded (invoke
 * and completion, a unique value per write, and for a failed write whether it surely did not take
 * effect).
 *
 * <p>Checked: the cluster keeps acknowledging writes while the server is away (its regions' groups
 * shrink, a dead primary's backup is promoted); a server with a frozen thread stopped itself,
 * saying why in its log, while a paused one (whose watchdog saw no time pass) did not; once it is
 * back, every group is whole again (the server rejoins as a backup and is caught up); the history
 * is linearizable per key and every key's final read shows its last acknowledged write; no region
 * is reopened more than three times while the server is away; and {@code LocalCluster verify} finds
 * every backup holding what its primary holds: each backup would serve, if promoted, what its
 * primary serves, compared with data in every region's device levels (the servers' L0s are small,
 * and each cluster starts with a few MiB of data).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ServerFaultIT {
  private static final int REGIONS = 2;
  private static final int KEYS = 20;
  private static final int CLIENTS = 4;
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(5);
  private static final Duration AWAIT = Duration.ofSeconds(120);
  // The servers' watchdog limit: a frozen thread stops its server within it (and a round).
  private static final Duration WATCHDOG = Duration.ofSeconds(3);
  private static final String LOOP_STUCK = "has not come round its loop";

  // One for the class (the clusters outlive a scenario); kept when a test fails: the processes'
  // logs and the histories are in it.
  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  static Path dir;

  /**
   * One cluster per replication factor, shared by its scenarios: each leaves it whole (checked),
   * and each works on keys of its own. A scenario that fails discards it (the next starts afresh).
   */
  private final Map<Integer, ProcessCluster> clusters = new HashMap<>();

  private ProcessCluster cluster(int replication) throws Exception {
    ProcessCluster cluster = clusters.get(replication);
    if (cluster == null) {
      cluster =
          ProcessCluster.start(
              dir.resolve("cluster-rf" + replication + "-" + clusters.size()),
              "--servers",
              "3",
              "--regions",
              Integer.toString(REGIONS),
              "--replication",
              Integer.toString(replication),
              "--l0-size",
              ProcessCluster.SMALL_L0,
              "--watchdog-ms",
              Integer.toString((int) WATCHDOG.toMillis()));
      // Data in every region's device levels, which the scenarios' faults carry along (promoted,
      // caught up) and verify compares.
      try (KvsClient client = cluster.client(OPERATION_TIMEOUT)) {
        ProcessCluster.awaitFullStrength(client, REGIONS, replication, Duration.ofSeconds(60));
        Bulk.fillLevels(client, "levels", REGIONS);
      } catch (Exception | AssertionError e) {
        cluster.close();
        throw e;
      }
      clusters.put(replication, cluster);
    }
    return cluster;
  }

  @AfterAll
  void stopClusters() throws Exception {
    for (ProcessCluster cluster : clusters.values()) {
      cluster.close();
    }
  }

  /** Which server the fault hits. */
  enum Victim {
    /** The primary of the region the load's keys are in. */
    PRIMARY,
    /** A server leading no region: a backup of both. */
    BACKUP
  }

  /** How the server is taken away and brought back. */
  enum Fault {
    /** SIGKILL, then a restart once its session expired and the cluster moved on without it. */
    KILL("kill", "restart"),
    /** SIGSTOP for longer than the 4 s session timeout, then SIGCONT: its session has expired. */
    PAUSE("pause", "resume"),
    /**
     * One loop of its request path alone stopped for good (the rest of the process runs, heartbeats
     * and renews its lease): a primary's replication thread ({@code kvs-replicate}), a backup's
     * replication stream loop ({@code kvs-stream}, through which its primaries' writes reach it);
     * its watchdog stops the server; then a restart.
     */
    FREEZE("freeze a request-path loop of", "restart");

    /** The thread FREEZE stops on a server in {@code role}. */
    static String frozenThread(Victim role) {
      return role == Victim.PRIMARY ? "kvs-replicate" : "kvs-stream";
    }

    final String inject;
    final String heal;

    Fault(String inject, String heal) {
      this.inject = inject;
      this.heal = heal;
    }
  }

  static Stream<Arguments> faults() {
    return Stream.of(
        Arguments.of(3, Victim.PRIMARY, Fault.KILL),
        Arguments.of(3, Victim.PRIMARY, Fault.PAUSE),
        Arguments.of(3, Victim.PRIMARY, Fault.FREEZE),
        Arguments.of(3, Victim.BACKUP, Fault.KILL),
        Arguments.of(3, Victim.BACKUP, Fault.PAUSE),
        Arguments.of(3, Victim.BACKUP, Fault.FREEZE),
        Arguments.of(2, Victim.PRIMARY, Fault.KILL));
  }

  @ParameterizedTest(name = "replication {0}: {2} a {1}")
  @MethodSource("faults")
  void aServerTakenAwayLosesNoAcknowledgedWriteAndTheHistoryIsLinearizable(
      int replication, Victim role, Fault fault) throws Exception {
    ProcessCluster cluster = cluster(replication);
    try {
      String keyPrefix = "rf" + replication + "-" + role + "-" + fault;
      HistoryRecorder recorder = new HistoryRecorder(1 << 20);
      String victim;
      long servedWithout;
      String timings;
      Map<Long, Long> epochsBefore;
      Map<Long, Long> epochsMovedOn;
      try (KvsClient client = cluster.client(OPERATION_TIMEOUT)) {
        ProcessCluster.awaitFullStrength(client, REGIONS, replication, Duration.ofSeconds(60));
        // The loaded keys' region: its primary is the PRIMARY victim; a BACKUP victim leads no
        // region.
        String loaded =
            client.regionMap().regionFor(RecordedLoad.key(keyPrefix, 0)).orElseThrow().primary();
        Set<String> leaders =
            client.regionMap().regions().stream()
                .map(RegionDescriptor::primary)
                .collect(Collectors.toCollection(TreeSet::new));
        victim =
            List.of("s1", "s2", "s3").stream()
                .filter(
                    id ->
                        role == Victim.PRIMARY
                            ? id.equals(loaded)
                            : !leaders.contains(id) && replication == 3)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no server to take away as " + role));

        RecordedLoad load =
            RecordedLoad.start(client, recorder, CLIENTS, keyPrefix, KEYS, OPERATION_TIMEOUT);
        load.awaitMore(200, AWAIT);
        epochsBefore = epochs(client);
        // What the victim logs from the fault on (its log outlives the scenarios: a server
        // frozen in one may be the backup paused in a later one).
        int logBefore = cluster.log("server-" + victim).length();
        long injected = System.nanoTime();
        if (fault == Fault.FREEZE) {
          awaitStoppedByItsWatchdog(cluster, victim, Fault.frozenThread(role), logBefore);
        } else {
          cluster.inject(fault.inject, victim);
        }
        // The cluster serves without it: every group moves on to its live members.
        ProcessCluster.awaitMovedOn(client, victim, Duration.ofSeconds(30));
        long movedOn = System.nanoTime();
        epochsMovedOn = epochs(client);
        // A region it was a member of is reopened when its stream to it fails (it joins again)
        // and when its node goes (the group shrinks, or a backup is promoted); not on every pass
        // while its node outlives it (which took one region through 28 epochs in 4 s).
        epochsBefore.forEach(
            (region, epoch) ->
                assertThat(epochsMovedOn.get(region) - epoch)
                    .as("epochs region %d went through while %s was away", region, victim)
                    .isLessThanOrEqualTo(3L));
        int before = load.acknowledged();
        load.awaitMore(200, AWAIT);
        servedWithout = load.acknowledged() - before;
        long served = System.nanoTime();
        cluster.inject(fault.heal, victim);
        long healed = System.nanoTime();
        if (fault == Fault.PAUSE) {
          // Resumed after seconds without a probe round: not a stuck loop.
          assertThat(cluster.log("server-" + victim).substring(logBefore))
              .doesNotContain(LOOP_STUCK);
        }
        ProcessCluster.awaitFullStrength(client, REGIONS, replication, Duration.ofSeconds(90));
        long whole = System.nanoTime();
        timings =
            String.format(
                "moved on in %d ms, 200 writes without it in %d ms, healed in %d ms, whole in %d"
                    + " ms",
                (movedOn - injected) / 1_000_000,
                (served - movedOn) / 1_000_000,
                (healed - served) / 1_000_000,
                (whole - healed) / 1_000_000);
        load.awaitMore(200, AWAIT);
        load.finish();
      }
      History history = recorder.history();
      Verdict verdict = RecordedLoad.check(history, dir.resolve("history-" + keyPrefix + ".jsonl"));
      assertThat(verdict.isLinearizable()).as(verdict.describe()).isTrue();
      assertThat(verdict.lostWrites()).isEmpty();
      long failed =
          history.operations().stream()
              .filter(operation -> operation.outcome() != Outcome.OK)
              .count();
      System.out.printf(
          "ServerFaultIT RF %d %s %s (%s): %d operations, %d not OK, %d acknowledged while it"
              + " was away (%s; epochs %s -> %s); %s%n",
          replication,
          fault,
          role,
          victim,
          history.size(),
          failed,
          servedWithout,
          timings,
          epochsBefore,
          epochsMovedOn,
          verdict.summary());
      cluster.verify();
    } catch (Throwable failure) {
      clusters.remove(replication);
      try {
        cluster.close();
      } catch (Exception | AssertionError suppressed) {
        failure.addSuppressed(suppressed);
      }
      throw failure;
    }
  }

  /**
   * Freezes thread {@code thread} of {@code victim}, and waits until its watchdog stopped it (the
   * process ends, its log saying why).
   */
  private static void awaitStoppedByItsWatchdog(
      ProcessCluster cluster, String victim, String thread, int logBefore) throws Exception {
    ProcessHandle process = cluster.process("server-" + victim);
    try (FrozenThread frozen = FrozenThread.freeze(process, thread)) {
      assertThat(frozen.awaitProcessEnd(WATCHDOG.multipliedBy(10)))
          .as(
              "%s stopped by its watchdog within %s of its thread %s freezing",
              victim, WATCHDOG.multipliedBy(10), thread)
          .isTrue();
    }
    assertThat(cluster.log("server-" + victim).substring(logBefore))
        .contains(LOOP_STUCK)
        .contains("(" + thread + ")");
  }

  /** Each region's epoch in {@code client}'s map. */
  private static Map<Long, Long> epochs(KvsClient client) {
    Map<Long, Long> epochs = new TreeMap<>();
    client.regionMap().regions().forEach(region -> epochs.put(region.id(), region.epoch()));
    return epochs;
  }
}
