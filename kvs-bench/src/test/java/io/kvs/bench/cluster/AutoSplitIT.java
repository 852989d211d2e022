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
 * parent's levels reports its part of them (about 2 MB), so the splits do not cascade. And a hot
 * region splits by load where its requests split in half.
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

  /**
   * A region serving {@code --split-qps} requests a second over the window is split by the master
   * where its requests split in half, not in the middle of its bytes: a thousand keys written in
   * order, then reads of the ten at the top only; the first split falls among those ten (the middle
   * by size would be near the 500th key). Every key reads back after it.
   */
  @Test
  void aHotRegionSplitsWhereItsRequestsSplitInHalf() throws Exception {
    try (ProcessCluster cluster =
            ProcessCluster.start(
                dir.resolve("load-cluster"),
                "--servers",
                "3",
                "--regions",
                "1",
                "--replication",
                "2",
                "--split-size",
                Long.toString(1L << 30),
                "--split-first-size",
                Long.toString(1L << 30),
                "--split-qps",
                "200",
                "--split-window-ms",
                "2000");
        KvsClient client = cluster.client(Duration.ofSeconds(20))) {
      ProcessCluster.awaitFullStrength(client, 1, 2, Duration.ofSeconds(60));
      int keys = 1000;
      for (int i = 0; i < keys; i++) {
        client.put(loadKey(i), Bulk.value("load", i));
      }
      long deadline = System.nanoTime() + AWAIT.toNanos();
      int reads = 0;
      while (client.regionMap().size() < 2 && System.nanoTime() < deadline) {
        assertThat(client.get(loadKey(990 + reads++ % 10))).isPresent();
      }
      RegionMap map = cluster.mapNow();
      assertThat(map.size()).as("split by load within %s", AWAIT).isGreaterThanOrEqualTo(2);
      byte[] cut = map.regions().get(0).end();
      String at = new String(cut, java.nio.charset.StandardCharsets.UTF_8);
      assertThat(at).as("the first split key").isBetween("load/00990", "load/00999");
      ProcessCluster.awaitFullStrength(client, map.size(), 2, AWAIT);
      for (int i = 0; i < keys; i++) {
        assertThat(client.get(loadKey(i))).as("key %d", i).hasValue(Bulk.value("load", i));
      }
      System.out.printf(
          "AutoSplitIT: split by load at %s after %d reads of the ten top keys: %s%n",
          at, reads, map.regions());
    }
  }

  private static byte[] loadKey(int i) {
    return String.format("load/%05d", i).getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }
}
