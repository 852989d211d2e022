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
 * The master splits regions by itself once their primaries hold {@code --split-size} bytes (3 MB
 * here, a 1 s window), with real processes (three servers, two regions, replication 2, send-index):
 * a bulk load of about 8 MB over the whole key space passes the size in both regions (about 4 MB
 * each), and the master splits them, one at a time, with no operator; the map then covers the key
 * space with no hole or overlap, every key reads back as written, and {@code LocalCluster verify}
 * finds every region's backups holding what its primary holds. A daughter still sharing its
 * parent's levels reports its part of them (about 2 MB), so the splits do not cascade.
 */
class AutoSplitIT {
  private static final int REGIONS = 2;
  private static final int KEYS = 1200;
  private static final Duration AWAIT = Duration.ofSeconds(120);

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  static Path dir;

  @Test
  void regionsPastTheSplitSizeSplitByThemselves() throws Exception {
    try (ProcessCluster cluster =
            ProcessCluster.start(
                dir.resolve("cluster"),
                "--servers",
                "3",
                "--regions",
                Integer.toString(REGIONS),
                "--replication",
                "2",
                "--split-size",
                Long.toString(3_000_000),
                "--split-window-ms",
                "1000",
                "--l0-size",
                ProcessCluster.SMALL_L0);
        KvsClient client = cluster.client(Duration.ofSeconds(20))) {
      ProcessCluster.awaitFullStrength(client, REGIONS, 2, Duration.ofSeconds(60));
      long began = System.nanoTime();
      Bulk.write(client, "auto", KEYS);
      ProcessCluster.awaitCondition(
          "both regions split by the master",
          AWAIT,
          () -> {
            RegionMap map = cluster.mapNow();
            return map.size() >= REGIONS * 2
                && map.regions().stream().allMatch(r -> r.state() == RegionState.OPEN);
          });
      long millis = (System.nanoTime() - began) / 1_000_000;
      RegionMap map = cluster.regionMap();
      List<RegionDescriptor> sorted = map.regions();
      assertThat(map.isComplete()).as("the key space covered: %s", sorted).isTrue();
      assertThat(sorted).allMatch(region -> region.id() > REGIONS);
      ProcessCluster.awaitFullStrength(client, map.size(), 2, AWAIT);
      for (int i = 0; i < KEYS; i++) {
        assertThat(client.get(TestKeys.key("auto", i)))
            .as("key %d", i)
            .hasValue(Bulk.value("auto", i));
      }
      cluster.verify();
      System.out.printf(
          "AutoSplitIT: %d regions %d ms after a %d-key load began: %s%n",
          map.size(), millis, KEYS, sorted);
    }
  }
}
