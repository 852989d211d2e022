package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.client.KvsClient;
import io.kvs.client.Transport;
import io.kvs.core.KeyValue;
import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.engine.Engine;
import io.kvs.engine.EngineOptions;
import io.kvs.engine.Region;
import io.kvs.server.regions.HostedRegions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A cluster of processes (ZooKeeper, a master, three region servers, build-index replication at
 * factor 2 and 3, small L0s) serves every operation over both transports; {@code LocalCluster
 * verify} finds every backup would serve what its primary serves, with data in every replica's
 * device levels; stopped cleanly, every acknowledged write is in the engine of the region's primary
 * and of each of its backups, deletes included.
 */
class ReplicatedClusterIT {
  private static final int REGIONS = 6;

  /**
   * Keys per region of {@link Bulk} data: a build-index backup applies its primary's records a 2
   * MiB buffer at a time, so it lags by up to that much, and each of its own 1 MiB L0s fills only
   * once its primary holds about 3 MiB of the region.
   */
  private static final int LEVEL_KEYS_PER_REGION = 2 * Bulk.KEYS_PER_REGION;

  private static final int KEYS = 800;

  // Kept when a test fails: the processes' logs are in it.
  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  private ProcessCluster cluster;

  /** What the cluster should hold: key to value, null for deleted. */
  private final Map<byte[], byte[]> expected = new TreeMap<>(Keys::compare);

  @AfterEach
  void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @ParameterizedTest(name = "replication {0}")
  @ValueSource(ints = {2, 3})
  void everyOperationOnBothTransportsAndEveryCopyOnDisk(int replication) throws Exception {
    cluster =
        ProcessCluster.start(
            dir,
            "--servers",
            "3",
            "--regions",
            Integer.toString(REGIONS),
            "--replication",
            Integer.toString(replication),
            "--mode",
            "build-index",
            "--l0-size",
            ProcessCluster.SMALL_L0);
    RegionMap map = null;
    for (Transport transport : Transport.values()) {
      try (KvsClient client = cluster.client(transport)) {
        ProcessCluster.awaitAllOpen(client, REGIONS, Duration.ofSeconds(30));
        if (map == null) {
          // Data in every region's device levels, on every replica (each compacts its own).
          Bulk.write(client, "levels", REGIONS * LEVEL_KEYS_PER_REGION);
          for (int i = 0; i < REGIONS * LEVEL_KEYS_PER_REGION; i++) {
            expected.put(TestKeys.key("levels", i), Bulk.value("levels", i));
          }
        }
        operations(client, transport.name().toLowerCase());
        // What the other transport wrote reads the same over this one.
        checkEverything(client);
        map = client.regionMap();
      }
    }
    for (RegionDescriptor region : map.regions()) {
      assertThat(region.backups()).as("backups of %s", region).hasSize(replication - 1);
    }
    // Live: every backup's region, with the records its stream has not applied yet, serves what
    // its primary serves, with data in every replica's device levels.
    cluster.verify();

    cluster.close();
    checkEngines(map);
  }

  private void operations(KvsClient client, String prefix) {
    List<CompletableFuture<Void>> writes = new ArrayList<>();
    for (int i = 0; i < KEYS; i++) {
      byte[] key = TestKeys.key(prefix, i);
      byte[] value = TestKeys.value(prefix, i, 0);
      writes.add(client.putAsync(key, value));
      expected.put(key, value);
    }
    CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).join();
    Set<Long> regions = new HashSet<>();
    for (int i = 0; i < KEYS; i++) {
      byte[] key = TestKeys.key(prefix, i);
      assertThat(client.get(key)).as("key %d", i).hasValue(expected.get(key));
      regions.add(client.regionMap().regionFor(key).orElseThrow().id());
    }
    assertThat(regions).as("regions the keys fall in").hasSize(REGIONS);

    for (int i = 0; i < KEYS; i += 5) {
      byte[] key = TestKeys.key(prefix, i);
      client.delete(key);
      expected.put(key, null);
      assertThat(client.get(key)).as("deleted key %d", i).isEmpty();
    }
    for (int i = 1; i < KEYS; i += 7) {
      byte[] key = TestKeys.key(prefix, i);
      byte[] value = TestKeys.value(prefix, i, 1);
      client.put(key, value);
      expected.put(key, value);
    }
    // The protocol's limits exactly: a 4,096-byte key, a 1 MiB value.
    byte[] longKey = TestKeys.key(prefix + "-long-" + "k".repeat(4096), 1);
    longKey = Arrays.copyOf(longKey, 4096);
    byte[] bigValue = new byte[1 << 20];
    Arrays.fill(bigValue, (byte) prefix.length());
    client.put(longKey, bigValue);
    expected.put(longKey, bigValue);
    assertThat(client.get(longKey)).hasValue(bigValue);

    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < KEYS; i++) {
      keys.add(TestKeys.key(prefix, i));
    }
    keys.add(TestKeys.key(prefix + "-never-written", 1));
    List<Optional<byte[]>> values = client.multiGet(keys);
    for (int i = 0; i < keys.size(); i++) {
      assertThat(values.get(i).orElse(null))
          .as("multi-get of key %d", i)
          .isEqualTo(expected.get(keys.get(i)));
    }

    // A bounded scan across region boundaries: from the start of the third region, 50 pairs.
    byte[] from = client.regionMap().regions().get(2).start();
    List<KeyValue> page = client.scan(from, new byte[0], 50);
    assertThat(page).containsExactlyElementsOf(live(from).subList(0, 50));
    byte[] to = client.regionMap().regions().get(5).start();
    assertThat(client.scan(from, to, 100_000)).containsExactlyElementsOf(live(from, to));
  }

  private void checkEverything(KvsClient client) {
    List<KeyValue> all = client.scan(new byte[0], new byte[0], 100_000);
    assertThat(all).containsExactlyElementsOf(live(new byte[0]));
  }

  /** The live pairs from {@code from} on, in key order. */
  private List<KeyValue> live(byte[] from) {
    return live(from, new byte[0]);
  }

  private List<KeyValue> live(byte[] from, byte[] to) {
    List<KeyValue> pairs = new ArrayList<>();
    expected.forEach(
        (key, value) -> {
          if (value != null && Keys.inRange(key, from, to)) {
            pairs.add(new KeyValue(key, value));
          }
        });
    return pairs;
  }

  /**
   * Opens each server's volume offline: every copy of every region (primary and backups) holds
   * exactly what was acknowledged. Reports every copy that differs, with counts.
   */
  private void checkEngines(RegionMap map) {
    List<String> differences = new ArrayList<>();
    for (String server : List.of("s1", "s2", "s3")) {
      try (Engine engine =
          Engine.open(cluster.serverDir(server).resolve("volume"), EngineOptions.defaults())) {
        int copies = 0;
        for (RegionDescriptor region : map.regions()) {
          if (!region.members().contains(server)) {
            continue;
          }
          copies++;
          String role = region.primary().equals(server) ? "primary" : "backup";
          Region copy = engine.openRegion(HostedRegions.engineName(region.id()));
          int keys = 0;
          int missing = 0;
          int different = 0;
          String first = null;
          for (Map.Entry<byte[], byte[]> entry : expected.entrySet()) {
            if (!region.contains(entry.getKey())) {
              continue;
            }
            keys++;
            byte[] held = copy.get(entry.getKey());
            if (!Arrays.equals(held, entry.getValue())) {
              missing += held == null ? 1 : 0;
              different += held == null ? 0 : 1;
              first = first != null ? first : Keys.print(entry.getKey());
            }
          }
          if (missing + different > 0) {
            differences.add(
                String.format(
                    "region %d on its %s %s: %d of %d keys missing, %d different (first %s)",
                    region.id(), role, server, missing, keys, different, first));
          }
        }
        assertThat(copies).as("region copies on %s", server).isPositive();
      }
    }
    assertThat(differences)
        .as("copies that differ from the acknowledged writes (cluster directory %s)", dir)
        .isEmpty();
  }
}
