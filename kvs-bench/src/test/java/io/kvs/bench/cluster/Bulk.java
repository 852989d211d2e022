package io.kvs.bench.cluster;

import io.kvs.client.KvsClient;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Data for the device levels: keys spread over every region ({@link TestKeys#key}) with values of
 * every size category, mostly large (about 7 KB on average, so that few writes fill an L0), written
 * pipelined. With the cluster's servers started with {@code --l0-size} {@link
 * ProcessCluster#SMALL_L0}, {@link #KEYS_PER_REGION} keys per region (about 1.7 MB) fill an L0 and
 * start a compaction, so that {@link ProcessCluster#verify()} compares device levels, not only what
 * is in memory and in the logs.
 */
final class Bulk {
  /** Writes in flight at most. */
  private static final int IN_FLIGHT = 64;

  /** Keys per region that make sure every region's L0 (1 MiB) filled at least once. */
  static final int KEYS_PER_REGION = 250;

  private Bulk() {}

  /**
   * The value of key {@code i} of the set {@code prefix}: small (one in eight), medium (one in
   * eight) or large (6 to 12 KB), each unique.
   */
  static byte[] value(String prefix, int i) {
    byte[] text = (prefix + " " + i + " ").getBytes(StandardCharsets.UTF_8);
    int length =
        text.length
            + switch (i % 8) {
              case 0 -> 10;
              case 1 -> 500;
              default -> 6_000 + (i * 131) % 6_000;
            };
    byte[] value = Arrays.copyOf(text, length);
    for (int j = text.length; j < length; j++) {
      value[j] = (byte) (j * 31 + i);
    }
    return value;
  }

  /** Writes {@code keys} keys of the set {@code prefix}; every write must succeed. */
  static void write(KvsClient client, String prefix, int keys) {
    List<CompletableFuture<Void>> writes = new ArrayList<>();
    for (int i = 0; i < keys; i++) {
      writes.add(client.putAsync(TestKeys.key(prefix, i), value(prefix, i)));
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
