package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.client.KvsClient;
import io.kvs.client.Transport;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.ControlClient;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlReply;
import io.kvs.core.security.SecurityOptions;
import io.kvs.tools.local.LocalStatus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Send-Index on a cluster of processes (three servers, replication factor 3, L0s small enough that
 * every region compacts many times): the backups install the levels their primary ships, hold no L0
 * of their own, and {@code ./kvs local verify} finds that every backup would serve, if promoted,
 * what its primary serves (its levels and the records of its log copies past them), with pairs in
 * every member's device levels; after a backup restarts (and catches up), again.
 */
class SendIndexClusterIT {
  private static final int REGIONS = 3;
  private static final int KEYS = 12_000;

  // Kept when a test fails: the processes' logs are in it.
  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  private ProcessCluster cluster;

  @AfterEach
  void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** Small, medium and large values (DESIGN.md §8), so every log and the medium log are shipped. */
  private static byte[] value(int i, int round) {
    int length = new int[] {12, 100, 1_500}[i % 3];
    byte[] value = Arrays.copyOf(("v" + i + "r" + round + "-").getBytes(), length);
    Arrays.fill(value, Math.min(length, 12), length, (byte) (i + round));
    return value;
  }

  @Test
  void backupsInstallThePrimarysLevelsAndVerifyFindsThemEqual() throws Exception {
    cluster =
        ProcessCluster.start(
            dir,
            "--servers",
            "3",
            "--regions",
            Integer.toString(REGIONS),
            "--replication",
            "3",
            "--mode",
            "send-index",
            "--l0-size",
            Integer.toString(1 << 20));
    try (KvsClient client = cluster.client(Transport.FABRIC)) {
      ProcessCluster.awaitAllOpen(client, REGIONS, Duration.ofSeconds(30));
      write(client, 0);
      for (int i = 0; i < KEYS; i += 7) {
        client.delete(TestKeys.key("si", i));
      }
      write(client, 1);

      String report = cluster.verify();
      assertThat(report).contains(REGIONS + " of " + REGIONS + " regions");
      Map<String, Map<String, Long>> stats = stats();
      // Which server is primary of which region may have changed under load (a lease that
      // lapsed): the counters of a role a server does not hold are absent, and what holds for
      // the cluster is checked over the servers' sum.
      long primaryCompactions = 0;
      long backupLevels = 0;
      long backupSegments = 0;
      for (Map.Entry<String, Map<String, Long>> server : stats.entrySet()) {
        Map<String, Long> counters = server.getValue();
        System.out.printf(
            "SendIndexClusterIT %s: %d compactions of its primaries, %d levels installed as a"
                + " backup%n",
            server.getKey(),
            counters.getOrDefault("primary.compactions", 0L),
            counters.getOrDefault("replication.backupLevels", 0L));
        primaryCompactions += counters.getOrDefault("primary.compactions", 0L);
        backupLevels += counters.getOrDefault("replication.backupLevels", 0L);
        backupSegments += counters.getOrDefault("replication.backupSegments", 0L);
        // Backups hold no L0 and compact nothing: their primaries do it for them.
        assertThat(counters.getOrDefault("backup.l0Bytes", 0L))
            .as("backup L0 on %s", server.getKey())
            .isZero();
        assertThat(counters.getOrDefault("backup.compactions", 0L))
            .as("backup compactions on %s", server.getKey())
            .isZero();
      }
      // Every region compacts several times (1 MiB L0s); its backups install what it ships.
      assertThat(primaryCompactions).as("compactions of the primaries").isGreaterThan(REGIONS);
      assertThat(backupLevels).as("levels installed by backups").isGreaterThan(REGIONS);
      assertThat(backupSegments).as("index segments backups rewrote").isPositive();

      // A backup restarted cleanly is caught up when its regions reopen, and agrees again.
      cluster.stopProcess("server-s3");
      cluster.startServer("s3");
      // Every group whole again, s3 caught up in each.
      ProcessCluster.awaitFullStrength(client, REGIONS, 3, Duration.ofSeconds(90));
      write(client, 2);
      assertThat(cluster.verify()).contains(REGIONS + " of " + REGIONS + " regions");
      for (int i = 0; i < KEYS; i++) {
        Optional<byte[]> read = client.get(TestKeys.key("si", i));
        assertThat(read.orElse(null)).as("key %d", i).isEqualTo(value(i, 2));
      }
    }
  }

  private void write(KvsClient client, int round) {
    List<CompletableFuture<Void>> writes = new ArrayList<>();
    for (int i = 0; i < KEYS; i++) {
      writes.add(client.putAsync(TestKeys.key("si", i), value(i, round)));
      if (writes.size() == 256) {
        CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).join();
        writes.clear();
      }
    }
    CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).join();
  }

  private Map<String, Map<String, Long>> stats() throws Exception {
    Map<String, ServerInfo> servers = LocalStatus.liveServers(cluster.zookeeper(), "default");
    Map<String, Map<String, Long>> stats = new java.util.TreeMap<>();
    try (ControlClient control =
        new ControlClient(
            Duration.ofSeconds(30), SecurityOptions.forClusterDirectory(cluster.dir(), "admin"))) {
      for (ServerInfo server : servers.values()) {
        ControlReply reply =
            control.call(server.host(), server.controlPort(), new ControlCommand.Stats());
        assertThat(reply.isOk()).as("stats of %s: %s", server.id(), reply.message()).isTrue();
        stats.put(server.id(), reply.stats());
      }
    }
    assertThat(stats).hasSize(3);
    return stats;
  }
}
