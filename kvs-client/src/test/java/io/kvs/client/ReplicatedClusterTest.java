package io.kvs.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.KeyValue;
import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.engine.Region;
import io.kvs.master.EmbeddedZooKeeper;
import io.kvs.master.Master;
import io.kvs.master.MasterOptions;
import io.kvs.server.RegionServer;
import io.kvs.server.ServerOptions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The whole cluster in one JVM: ZooKeeper, a master, three region servers replicating in
 * build-index mode over the fabric tcp provider, and the client. Every acknowledged write is in
 * every backup's engine once the primaries hand their last records over.
 */
class ReplicatedClusterTest {
  @TempDir Path directory;
  private EmbeddedZooKeeper zookeeper;
  private final Map<String, RegionServer> servers = new HashMap<>();
  private Master master;

  @BeforeEach
  void startZooKeeper() throws Exception {
    zookeeper = EmbeddedZooKeeper.start(directory.resolve("zookeeper"), 0);
  }

  @AfterEach
  void stopAll() throws Exception {
    if (master != null) {
      master.close();
    }
    for (RegionServer server : servers.values()) {
      server.close();
    }
    zookeeper.close();
  }

  private void startCluster(int replication) throws Exception {
    for (String id : List.of("s1", "s2", "s3")) {
      servers.put(
          id,
          RegionServer.start(
              ServerOptions.builder(id, directory.resolve(id), zookeeper.connectString())
                  .cluster("replicated")
                  .fabricProvider("tcp")
                  .memoryBudgetBytes(64L << 20)
                  .build()));
    }
    master =
        Master.start(
            new MasterOptions(
                "m1",
                zookeeper.connectString(),
                "replicated",
                new ClusterConfig(8, replication, ReplicationMode.BUILD_INDEX, List.of()),
                3,
                Duration.ofMillis(200),
                Duration.ofSeconds(20)));
  }

  private static byte[] key(int i) {
    // Two hashed leading bytes spread keys over the uniform split; the number keeps them unique.
    int spread = (int) ((i * 2654435761L) >>> 16);
    byte[] number = Integer.toString(i).getBytes(StandardCharsets.UTF_8);
    byte[] key = new byte[2 + number.length];
    key[0] = (byte) (spread >>> 8);
    key[1] = (byte) spread;
    System.arraycopy(number, 0, key, 2, number.length);
    return key;
  }

  private static byte[] value(int i) {
    return ("value-" + i + "-" + "x".repeat(i % 700)).getBytes(StandardCharsets.UTF_8);
  }

  /** Waits for the write; true if its outcome is unknown, and throws any other failure. */
  private static boolean outcomeUnknown(CompletableFuture<Void> write) {
    try {
      write.join();
      return false;
    } catch (CompletionException e) {
      if (e.getCause() instanceof OutcomeUnknownException) {
        return true;
      }
      throw e;
    }
  }

  /** Runs a write until its outcome is known: at most five times, then the test fails. */
  private static void writeUntilKnown(String what, ThrowingRunnable write) throws Exception {
    for (int attempt = 1; ; attempt++) {
      try {
        write.run();
        return;
      } catch (OutcomeUnknownException e) {
        if (attempt == 5) {
          throw new AssertionError(what + ": outcome still unknown after " + attempt + " tries", e);
        }
      }
    }
  }

  private interface ThrowingRunnable {
    void run() throws Exception;
  }

  @ParameterizedTest
  @ValueSource(ints = {2, 3})
  void everyAcknowledgedWriteIsInEveryBackup(int replication) throws Exception {
    startCluster(replication);
    try (KvsClient client =
        KvsClient.builder()
            .zookeeper(zookeeper.connectString())
            .cluster("replicated")
            .operationTimeout(Duration.ofSeconds(30))
            .build()) {
      ClusterTestBase.awaitCondition(
          "every region open",
          Duration.ofSeconds(30),
          () ->
              client.regionMap().size() == 8
                  && client.regionMap().regions().stream()
                      .allMatch(r -> r.state() == RegionState.OPEN));
      int keys = 4000;
      List<CompletableFuture<Void>> writes = new ArrayList<>();
      for (int i = 0; i < keys; i++) {
        writes.add(client.putAsync(key(i), value(i)));
      }
      // A backup slower than the stall timeout (an fsync behind a busy disk) fails its stream, and
      // the writes it held come back with an unknown outcome. The test is each key's only writer,
      // so, as an application would, it writes those again; every other failure fails the test.
      for (int i = 0; i < keys; i++) {
        int k = i;
        if (outcomeUnknown(writes.get(i))) {
          writeUntilKnown("put " + i, () -> client.put(key(k), value(k)));
        }
      }
      for (int i = 0; i < keys; i += 7) {
        int k = i;
        writeUntilKnown("delete " + i, () -> client.delete(key(k)));
      }
      assertThat(client.get(key(1))).hasValueSatisfying(v -> assertThat(v).isEqualTo(value(1)));
      assertThat(client.get(key(7))).isEmpty();
      List<KeyValue> all = client.scan(new byte[0], new byte[0], 10_000);
      assertThat(all).hasSize(keys - (keys + 6) / 7);

      // The primaries hand what their streams hold over (as a clean stop does); then every
      // backup's engine holds every acknowledged write, deletes included.
      RegionMap map = client.regionMap();
      for (RegionDescriptor region : map.regions()) {
        servers.get(region.primary()).regions().close(region.id(), region.epoch());
      }
      for (int k = 0; k < keys; k++) {
        int i = k;
        RegionDescriptor region = map.regionFor(key(i)).orElseThrow();
        assertThat(region.backups()).hasSize(replication - 1);
        for (String backup : region.backups()) {
          Region engineRegion = servers.get(backup).regions().engineRegion(region.id());
          Optional<byte[]> held = Optional.ofNullable(engineRegion.get(key(i)));
          if (i % 7 == 0) {
            assertThat(held).as("key %d deleted on backup %s", i, backup).isEmpty();
          } else {
            assertThat(held)
                .as("key %d on backup %s", i, backup)
                .hasValueSatisfying(v -> assertThat(v).isEqualTo(value(i)));
          }
        }
      }
    }
  }
}
