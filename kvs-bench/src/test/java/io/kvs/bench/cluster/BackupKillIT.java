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
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A fault for real, checked on the clients' recorded history: a region server that backs up every
 * region (and leads none) is killed with SIGKILL and restarted, or paused with SIGSTOP past its
 * session timeout and resumed, while four clients write, delete and read twenty shared keys. Every
 * operation is recorded (invoke and completion, a unique value per write, and for a failed write
 * whether it surely did not take effect); afterwards the history must be linearizable per key and
 * every key's final read must show its last acknowledged write, and {@code LocalCluster verify}
 * must find every backup holding what its primary holds.
 *
 * <p>Today a region waits for its members, so the regions are unavailable while the backup is down
 * (writes fail, as not applied or of unknown outcome); promotion and re-replication will keep them
 * serving, and this scenario then extends to the primary.
 */
class BackupKillIT {
  private static final int REGIONS = 2;
  private static final int KEYS = 20;
  private static final int CLIENTS = 4;
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(5);

  // Kept when the test fails: the processes' logs and the history are in it.
  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  /** How the backup is taken away and brought back. */
  enum Fault {
    /**
     * SIGKILL, then a restart (within its old session, so the master finds it lost its regions).
     */
    KILL("kill", "restart", Duration.ofSeconds(2)),
    /** SIGSTOP for longer than the 4 s session timeout, then SIGCONT: its session has expired. */
    PAUSE("pause", "resume", Duration.ofSeconds(7));

    final String inject;
    final String heal;
    final Duration lasting;

    Fault(String inject, String heal, Duration lasting) {
      this.inject = inject;
      this.heal = heal;
      this.lasting = lasting;
    }
  }

  @ParameterizedTest
  @EnumSource(Fault.class)
  void aBackupTakenAwayLosesNoAcknowledgedWriteAndTheHistoryIsLinearizable(Fault fault)
      throws Exception {
    try (ProcessCluster cluster =
        ProcessCluster.start(
            dir.resolve("cluster-" + fault),
            "--servers",
            "3",
            "--regions",
            Integer.toString(REGIONS),
            "--replication",
            "3")) {
      HistoryRecorder recorder = new HistoryRecorder(1 << 20);
      try (KvsClient client =
          KvsClient.builder()
              .zookeeper(cluster.zookeeper())
              .cluster("default")
              .transport(Transport.TCP)
              .operationTimeout(OPERATION_TIMEOUT)
              .build()) {
        ProcessCluster.awaitAllOpen(client, REGIONS, Duration.ofSeconds(60));
        Set<String> leaders =
            client.regionMap().regions().stream()
                .map(RegionDescriptor::primary)
                .collect(Collectors.toCollection(TreeSet::new));
        String victim =
            List.of("s1", "s2", "s3").stream()
                .filter(id -> !leaders.contains(id))
                .findFirst()
                .orElseThrow(() -> new AssertionError("every server leads a region"));

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
        Thread.sleep(fault.lasting.toMillis()); // the fault's duration: load runs on meanwhile
        cluster.inject(fault.heal, victim);
        ProcessCluster.awaitAllOpen(client, REGIONS, Duration.ofSeconds(90));
        int before = acknowledged.get();
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
      if (!verdict.isLinearizable()) {
        history.writeJsonLines(dir.resolve("history-" + fault + ".jsonl"));
      }
      assertThat(verdict.isLinearizable()).as(verdict.describe()).isTrue();
      assertThat(verdict.lostWrites()).isEmpty();
      long failedWrites =
          history.operations().stream()
              .filter(operation -> operation.outcome() != Outcome.OK)
              .count();
      System.out.printf(
          "BackupKillIT %s: %d operations, %d not OK; %s%n",
          fault, history.size(), failedWrites, verdict.summary());
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

  // Generous: a reconciliation pass may wait out a control call to the restarted server.
  private static void awaitAcknowledged(AtomicInteger acknowledged, int count) {
    ProcessCluster.awaitCondition(
        count + " acknowledged writes", Duration.ofSeconds(120), () -> acknowledged.get() >= count);
  }
}
