package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.client.KvsClient;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionState;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master merges small, cold neighbours by itself, with real processes (four servers, three
 * regions, replication 2, send-index): the bootstrap spreads the regions' replicas and leadership
 * over the servers, so no two neighbours share one group, and each merge first gives the smaller
 * region the other's group, step by step (a server it lacks joins it, then the one the other lacks
 * leaves, then its leadership moves). With {@code --merge-size} 16 MB and a 2 s rest, a small load
 * (in the device levels: a small in-memory level) ends in one region covering the whole key space,
 * every key reads back as written, and {@code LocalCluster verify} finds the backup holding what
 * the primary holds.
 */
class AutoMergeIT {
  private static final int REGIONS = 3;
  private static final int KEYS = 1200;
  private static final Duration AWAIT = Duration.ofSeconds(180);

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  static Path dir;

  @Test
  void coldNeighboursOfDifferentGroupsMergeByThemselves() throws Exception {
    try (ProcessCluster cluster =
            ProcessCluster.start(
                dir.resolve("cluster"),
                "--servers",
                "4",
                "--regions",
                Integer.toString(REGIONS),
                "--replication",
                "2",
                "--merge-size",
                Long.toString(16_000_000),
                "--merge-rest-ms",
                "2000",
                "--l0-size",
                ProcessCluster.SMALL_L0);
        KvsClient client = cluster.client(Duration.ofSeconds(20))) {
      ProcessCluster.awaitFullStrength(client, REGIONS, 2, Duration.ofSeconds(60));
      List<RegionDescriptor> bootstrap = cluster.regionMap().regions();
      for (int i = 0; i + 1 < bootstrap.size(); i++) {
        assertThat(bootstrap.get(i).sameGroupAs(bootstrap.get(i + 1)))
            .as("neighbours of different groups: %s", bootstrap)
            .isFalse();
      }
      long began = System.nanoTime();
      Bulk.write(client, "cold", KEYS);
      ProcessCluster.awaitCondition(
          "the regions merged into one by the master",
          AWAIT,
          () -> {
            RegionMap map = cluster.mapNow();
            return map.size() == 1
                && map.regions().stream().allMatch(r -> r.state() == RegionState.OPEN);
          });
      long millis = (System.nanoTime() - began) / 1_000_000;
      RegionMap map = cluster.regionMap();
      List<RegionDescriptor> regions = map.regions();
      assertThat(map.isComplete()).as("the key space covered: %s", regions).isTrue();
      assertThat(regions.get(0).id()).as("a merged region").isGreaterThan(REGIONS);
      ProcessCluster.awaitFullStrength(client, 1, 2, AWAIT);
      for (int i = 0; i < KEYS; i++) {
        assertThat(client.get(TestKeys.key("cold", i)))
            .as("key %d", i)
            .hasValue(Bulk.value("cold", i));
      }
      cluster.verify();
      System.out.printf(
          "AutoMergeIT: one region %d ms after a %d-key load began: %s%n", millis, KEYS, regions);
    }
  }
}
