package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.client.KvsClient;
import io.kvs.client.NotAppliedException;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --min-replicas 2} holds through a session blip, for real: two region servers at
 * replication 2; the backup is killed with SIGKILL, so the group shrinks to its primary alone,
 * whose writes are refused (NOT_ENOUGH_REPLICAS, nothing written); then the primary is paused with
 * SIGSTOP past its session timeout and resumed, so it loses its session, closes every region, and
 * the master opens the region on it again -- a primary attached with no backup, in a process whose
 * replication groups are gone. Its writes must still be refused: none may be acknowledged while one
 * replica holds it. Once the backup returns and is caught up, writes are acknowledged again and
 * every one of them is there.
 */
class MinReplicasIT {
  private static final Duration AWAIT = Duration.ofSeconds(120);
  private static final int ATTEMPTS = 10;

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  @Test
  void noWriteIsAcknowledgedBelowTheMinimumAfterASessionBlip() throws Exception {
    try (ProcessCluster cluster =
        ProcessCluster.start(
            dir.resolve("cluster"),
            "--servers",
            "2",
            "--regions",
            "1",
            "--replication",
            "2",
            "--min-replicas",
            "2")) {
      try (KvsClient client = cluster.client(Duration.ofSeconds(2))) {
        ProcessCluster.awaitFullStrength(client, 1, 2, AWAIT);
        RegionDescriptor whole = client.regionMap().regions().get(0);
        client.put(bytes("before"), bytes("v"));
        String primary = whole.primary();
        String backup = whole.backups().get(0);

        cluster.inject("kill", backup);
        ProcessCluster.awaitMovedOn(client, backup, AWAIT);
        assertRefused(client, "alone");

        // The session blip: past the 4 s session timeout the master sees the primary gone (the
        // region goes offline: no live member holds it); resumed, the primary has a new session,
        // closes what it held, and is given the region again.
        cluster.inject("pause", primary);
        ProcessCluster.awaitCondition(
            "the region offline while " + primary + " is paused",
            AWAIT,
            () -> client.regionMap().regions().get(0).state() == RegionState.OFFLINE);
        long offlineEpoch = client.regionMap().regions().get(0).epoch();
        cluster.inject("resume", primary);
        ProcessCluster.awaitCondition(
            "the region open again on " + primary,
            AWAIT,
            () -> {
              RegionDescriptor now = client.regionMap().regions().get(0);
              return now.state() == RegionState.OPEN
                  && now.epoch() > offlineEpoch
                  && now.primary().equals(primary)
                  && now.backups().isEmpty();
            });
        assertRefused(client, "after the blip");

        cluster.inject("restart", backup);
        ProcessCluster.awaitFullStrength(client, 1, 2, AWAIT);
        client.put(bytes("after"), bytes("v"));
        assertThat(client.get(bytes("before")).map(Arrays::toString))
            .isEqualTo(Optional.of(Arrays.toString(bytes("v"))));
        assertThat(client.get(bytes("after")).map(Arrays::toString))
            .isEqualTo(Optional.of(Arrays.toString(bytes("v"))));
        for (int i = 0; i < ATTEMPTS; i++) {
          assertThat(client.get(bytes("refused " + i))).isEmpty();
        }
      }
    }
  }

  /** Every write now is refused as surely not applied, and none of them is there. */
  private static void assertRefused(KvsClient client, String when) {
    for (int i = 0; i < ATTEMPTS / 2; i++) {
      String key = "refused " + (when.equals("alone") ? i : ATTEMPTS / 2 + i);
      try {
        client.put(bytes(key), bytes("v"));
        throw new AssertionError("a write was acknowledged with one replica (" + when + ")");
      } catch (NotAppliedException expected) {
        // refused before it applied: what a minimum of replicas must do
      }
    }
  }

  private static byte[] bytes(String text) {
    return text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }
}
