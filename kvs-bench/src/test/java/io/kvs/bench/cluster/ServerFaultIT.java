package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.History;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.LinearizabilityChecker;
import io.kvs.bench.history.Operation.Outcome;
import io.kvs.bench.history.Verdict;
import io.kvs.client.KvsClient;
import io.kvs.client.NotAppliedException;
import io.kvs.client.Transport;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Faults for real, checked on the clients' recorded history: with three region servers at
 * replication 3, a primary or a backup (a server leading no region) is killed with SIGKILL and
 * restarted, or paused with SIGSTOP past its 4 s session timeout and resumed, while four clients
 * write, delete and read twenty shared keys. Every operation is recorded (invoke and completion, a
 * unique value per write, and for a failed write whether it surely did not take effect).
 *
 * <p>Checked: the cluster keeps acknowledging writes while the server is away (its regions' groups
 * shrink, a dead primary's backup is promoted); once it is back, every group is whole again (the
 * server rejoins as a backup and is caught up); the history is linearizable per key and every key's
 * final read shows its last acknowledged write; and {@code LocalCluster verify} finds every backup
 * holding what its primary holds.
 */
class ServerFaultIT {
  private static final int REGIONS = 2;
  private static final int KEYS = 20;
  private static final int CLIENTS = 4;
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(5);

  // Kept when the test fails: the processes' logs and the history are in it.
  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  /** Which server the fault hits. */
  enum Victim {
    /** The primary of a region (and a backup of the other). */
    PRIMARY,
    /** A server leading no region: a backup of both. */
    BACKUP
  }

  /** How the server is taken away and brought back. */
  enum Fault {
    /** SIGKILL, then a restart once its session expired and the cluster moved on without it. */
    KILL("kill", "restart"),
    /** SIGSTOP for longer than the 4 s session timeout, then SIGCONT: its session has expired. */
    PAUSE("pause", "resume");

    final String inject;
    final String heal;

    Fault(String inject, String heal) {
      this.inject = inject;
      this.heal = heal;
    }
  }

  static Stream<Arguments> faults() {
    return Stream.of(Victim.values())
        .flatMap(victim -> Stream.of(Fault.values()).map(fault -> Arguments.of(victim, fault)));
  }

  @ParameterizedTest
  @MethodSource("faults")
  void aServerTakenAwayLosesNoAcknowledgedWriteAndTheHistoryIsLinearizable(Victim role, Fault fault)
      throws Exception {
    try (ProcessCluster cluster =
        ProcessCluster.start(
            dir.resolve("cluster-" + role + "-" + fault),
            "--servers",
            "3",
            "--regions",
            Integer.toString(REGIONS),
            "--replication",
            "3")) {
      HistoryRecorder recorder = new HistoryRecorder(1 << 20);
      String victim;
      long servedWithout;
      try (KvsClient client =
          KvsClient.builder()
              .zookeeper(cluster.zookeeper())
              .cluster("default")
              .transport(Transport.TCP)
              .operationTimeout(OPERATION_TIMEOUT)
              .build()) {
        ProcessCluster.awaitFullStrength(client, REGIONS, 3, Duration.ofSeconds(60));
        Set<String> leaders =
            client.regionMap().regions().stream()
                .map(RegionDescriptor::primary)
                .collect(Collectors.toCollection(TreeSet::new));
        victim =
            List.of("s1", "s2", "s3").stream()
                .filter(id -> leaders.contains(id) == (role == Victim.PRIMARY))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no server to take away as " + role));

        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger acknowledged = new AtomicInteger();
        List<Thread> clients = new ArrayList<>();
        for (int id = 0; id < CLIENTS; id++) {
          int clientId = id;
          Thread thread =
              new Thread(
                  () -> load(client, recorder, clientId, stop, acknowledged), "client-" + id);
          thread.start();
          clients.add(thread);
        }
        awaitAcknowledged(acknowledged, 200);
        cluster.inject(fault.inject, victim);
        // The cluster serves without it: every group moves on to its live members.
        String gone = victim;
        ProcessCluster.awaitCondition(
            "every region open without " + gone + "; map: " + client.regionMap().regions(),
            Duration.ofSeconds(30),
            () ->
                client.regionMap().regions().stream()
                    .allMatch(
                        region ->
                            region.state() == RegionState.OPEN
                                && !region.members().contains(gone)));
        int before = acknowledged.get();
        awaitAcknowledged(acknowledged, before + 200);
        servedWithout = acknowledged.get() - before;
        cluster.inject(fault.heal, victim);
        ProcessCluster.awaitFullStrength(client, REGIONS, 3, Duration.ofSeconds(90));
        before = acknowledged.get();
        awaitAcknowledged(acknowledged, before + 200);
        stop.set(true);
        for (Thread thread : clients) {
          thread.join(OPERATION_TIMEOUT.toMillis() * 3);
          assertThat(thread.isAlive()).as(thread.getName() + " stopped").isFalse();
        }
        for (int key = 0; key < KEYS; key++) {
          byte[] bytes = key(key);
          recorder.get(CLIENTS, bytes, () -> client.get(bytes)); // the final reads
        }
      }
      History history = recorder.history();
      Verdict verdict = new LinearizabilityChecker().check(history);
      if (!verdict.isLinearizable() || !verdict.lostWrites().isEmpty()) {
        history.writeJsonLines(dir.resolve("history-" + role + "-" + fault + ".jsonl"));
      }
      assertThat(verdict.isLinearizable()).as(verdict.describe()).isTrue();
      assertThat(verdict.lostWrites()).isEmpty();
      long failed =
          history.operations().stream()
              .filter(operation -> operation.outcome() != Outcome.OK)
              .count();
      System.out.printf(
          "ServerFaultIT %s %s (%s): %d operations, %d not OK, %d acknowledged while it was away;"
              + " %s%n",
          fault, role, victim, history.size(), failed, servedWithout, verdict.summary());
      cluster.verify();
    }
  }

  private static void load(
      KvsClient client,
      HistoryRecorder recorder,
      int clientId,
      AtomicBoolean stop,
      AtomicInteger acknowledged) {
    Random random = new Random(clientId);
    HistoryRecorder.FailureClassifier classifier =
        e -> e instanceof NotAppliedException ? Outcome.FAILED_NOT_APPLIED : Outcome.UNKNOWN;
    for (long sequence = 0; !stop.get(); sequence++) {
      byte[] key = key(random.nextInt(KEYS));
      int choice = random.nextInt(10);
      try {
        if (choice < 5) {
          byte[] value =
              ("client " + clientId + " write " + sequence).getBytes(StandardCharsets.UTF_8);
          recorder.put(clientId, key, value, () -> client.put(key, value), classifier);
          acknowledged.incrementAndGet();
        } else if (choice < 6) {
          recorder.delete(clientId, key, () -> client.delete(key), classifier);
          acknowledged.incrementAndGet();
        } else {
          recorder.get(clientId, key, () -> client.get(key));
        }
      } catch (Exception expected) {
        // Recorded with its outcome; the fault makes some operations fail.
      }
    }
  }

  private static byte[] key(int i) {
    return ("history-key-" + i).getBytes(StandardCharsets.UTF_8);
  }

  private static void awaitAcknowledged(AtomicInteger acknowledged, int count) {
    ProcessCluster.awaitCondition(
        count + " acknowledged writes", Duration.ofSeconds(120), () -> acknowledged.get() >= count);
  }
}
