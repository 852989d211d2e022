package io.kvs.bench.cluster;

import io.kvs.client.KvsClient;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Data for the device levels: keys spread over every region with values of every size ({@link
 * TestKeys}, about 2 KB on average), written pipelined. With the cluster's servers started with
 * {@code --l0-size} {@link ProcessCluster#SMALL_L0}, about 700 keys per region fill an L0 and start
 * a compaction, so that {@link ProcessCluster#verify()} compares device levels, not only what is in
 * memory and in the logs.
 */
final class Bulk {
  /** Writes in flight at most. */
  private static final int IN_FLIGHT = 128;

  /** Keys per region that make sure every region's L0 (1 MiB) filled at least once. */
  static final int KEYS_PER_REGION = 1_000;

  private Bulk() {}

  /**
   * Writes {@code keys} keys of the set {@code prefix} (round 0 values); every write must succeed.
   */
  static void write(KvsClient client, String prefix, int keys) {
    List<CompletableFuture<Void>> writes = new ArrayList<>();
    for (int i = 0; i < keys; i++) {
      writes.add(client.putAsync(TestKeys.key(prefix, i), TestKeys.value(prefix, i, 0)));
      if (writes.size() == IN_FLIGHT) {
        CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).join();
        writes.clear();
      }
    }
    CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).join();
  }

  /** Enough keys for {@code regions} regions ({@link #KEYS_PER_REGION} each). */
  static void fillLevels(KvsClient client, String prefix, int regions) {
    write(client, prefix, regions * KEYS_PER_REGION);
  }
}
