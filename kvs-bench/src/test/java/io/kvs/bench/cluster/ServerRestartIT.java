package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.client.KvsClient;
import io.kvs.client.Transport;
import io.kvs.core.InvalidRequestException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionState;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * One cluster of processes (three region servers, replication 2, send-index) for two tests: while a
 * region server is stopped its regions keep serving from their live members, and once it is started
 * again every group is whole with every key and {@code LocalCluster verify} finds every backup
 * holding what its primary holds (with data in every region's device levels: small L0s); and
 * requests beyond the protocol's limits are refused clearly while the cluster keeps serving.
 */
class ServerRestartIT {
  private static final int REGIONS = 4;
  // Enough for every region's device levels (the servers' L0s are small).
  private static final int KEYS = REGIONS * Bulk.KEYS_PER_REGION;

  // Kept when a test fails: the processes' logs are in it.
  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  static Path dir;

  private static ProcessCluster cluster;

  @BeforeAll
  static void startCluster() throws Exception {
    cluster =
        ProcessCluster.start(
            dir,
            "--servers",
            "3",
            "--regions",
            Integer.toString(REGIONS),
            "--replication",
            "2",
            "--l0-size",
            ProcessCluster.SMALL_L0);
  }

  @AfterAll
  static void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aStoppedServersRegionsKeepServingAndTheGroupsHealWhenItReturns() throws Exception {
    try (KvsClient client = cluster.client(Transport.TCP)) {
      ProcessCluster.awaitAllOpen(client, REGIONS, Duration.ofSeconds(30));
      Bulk.write(client, "restart", KEYS);
      for (int i = 0; i < KEYS; i += 10) {
        client.delete(TestKeys.key("restart", i));
      }
      RegionMap before = client.regionMap();

      cluster.stopProcess("server-s2");
      // The master moves every region s2 was in to its live members (a backup promoted where s2
      // led), and every key stays readable while s2 is down.
      ProcessCluster.awaitCondition(
          "every region open without s2; map: " + client.regionMap().regions(),
          Duration.ofSeconds(60),
          () ->
              client.regionMap().regions().stream()
                  .allMatch(
                      region ->
                          region.state() == RegionState.OPEN && !region.members().contains("s2")));
      List<byte[]> whileDown = new ArrayList<>();
      for (int i = 1; i < KEYS; i += 10) {
        whileDown.add(TestKeys.key("restart", i));
      }
      List<Optional<byte[]>> served = client.multiGet(whileDown);
      for (int i = 0; i < served.size(); i++) {
        assertThat(served.get(i).orElse(null))
            .as("key %d while s2 is down", 1 + 10 * i)
            .isEqualTo(Bulk.value("restart", 1 + 10 * i));
      }

      cluster.startServer("s2");
      ProcessCluster.awaitFullStrength(client, REGIONS, 2, Duration.ofSeconds(90));
      for (RegionDescriptor region : client.regionMap().regions()) {
        RegionDescriptor old = before.byId(region.id()).orElseThrow();
        if (old.members().contains("s2")) {
          assertThat(region.epoch())
              .as("epoch of region %d", region.id())
              .isGreaterThan(old.epoch());
        }
      }

      List<byte[]> keys = new ArrayList<>();
      for (int i = 0; i < KEYS; i++) {
        keys.add(TestKeys.key("restart", i));
      }
      List<Optional<byte[]>> values = client.multiGet(keys);
      for (int i = 0; i < KEYS; i++) {
        assertThat(values.get(i).orElse(null))
            .as("key %d after the restart", i)
            .isEqualTo(i % 10 == 0 ? null : Bulk.value("restart", i));
      }
      // And it takes writes again, on every region.
      for (int i = 0; i < 200; i++) {
        client.put(TestKeys.key("after", i), TestKeys.value("after", i, 0));
      }
      for (int i = 0; i < 200; i++) {
        assertThat(client.get(TestKeys.key("after", i))).hasValue(TestKeys.value("after", i, 0));
      }
    }
    // Every backup, the restarted server's caught-up ones included, would serve what its primary
    // serves, with data in every region's device levels.
    cluster.verify();
  }

  @Test
  void oversizedKeysAndValuesAreRefusedAndTheClusterKeepsServing() throws Exception {
    byte[] hugeKey = new byte[4097];
    byte[] hugeValue = new byte[(1 << 20) + 1];
    byte[] key = TestKeys.key("limits", 1);
    for (Transport transport : Transport.values()) {
      try (KvsClient client = cluster.client(transport)) {
        ProcessCluster.awaitAllOpen(client, REGIONS, Duration.ofSeconds(90));
        assertThatThrownBy(() -> client.put(hugeKey, new byte[1]))
            .isInstanceOf(InvalidRequestException.class)
            .hasMessage("key of 4097 bytes exceeds the limit of 4096 bytes")
            .satisfies(
                e ->
                    assertThat(((InvalidRequestException) e).status())
                        .isEqualTo(StatusCode.TOO_LARGE));
        assertThatThrownBy(() -> client.get(hugeKey))
            .isInstanceOf(InvalidRequestException.class)
            .hasMessageContaining("4097 bytes");
        assertThatThrownBy(() -> client.delete(hugeKey))
            .isInstanceOf(InvalidRequestException.class);
        assertThatThrownBy(() -> client.multiGet(List.of(key, hugeKey)))
            .isInstanceOf(InvalidRequestException.class);
        assertThatThrownBy(() -> client.scan(hugeKey, new byte[0], 10))
            .isInstanceOf(InvalidRequestException.class)
            .hasMessageContaining("scan start");
        assertThatThrownBy(() -> client.put(key, hugeValue))
            .isInstanceOf(InvalidRequestException.class)
            .hasMessageContaining("value of 1048577 bytes exceeds the limit of 1048576 bytes")
            .satisfies(
                e ->
                    assertThat(((InvalidRequestException) e).status())
                        .isEqualTo(StatusCode.TOO_LARGE));
        assertThat(client.putAsync(key, hugeValue))
            .failsWithin(Duration.ofSeconds(5))
            .withThrowableOfType(java.util.concurrent.ExecutionException.class)
            .withCauseInstanceOf(InvalidRequestException.class);
        assertThatThrownBy(() -> client.put(new byte[0], new byte[1]))
            .isInstanceOf(InvalidRequestException.class)
            .hasMessage("key is empty");

        // The cluster still serves this client.
        byte[] value = TestKeys.value("limits", 1, transport.ordinal());
        client.put(key, value);
        assertThat(client.get(key)).hasValue(value);
      }
    }
  }
}
