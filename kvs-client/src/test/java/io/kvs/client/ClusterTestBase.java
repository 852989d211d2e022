package io.kvs.client;

import static org.assertj.core.api.Assertions.fail;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.master.EmbeddedZooKeeper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/** One ZooKeeper per test class; a fresh cluster (own name, own servers) per test. */
abstract class ClusterTestBase {
  @TempDir static Path zooKeeperDirectory;
  static EmbeddedZooKeeper zooKeeper;

  @TempDir Path directory;
  TestCluster cluster;

  @BeforeAll
  static void startZooKeeper() throws Exception {
    zooKeeper = EmbeddedZooKeeper.start(zooKeeperDirectory, 0);
  }

  @AfterAll
  static void stopZooKeeper() {
    if (zooKeeper != null) {
      zooKeeper.close();
    }
  }

  @AfterEach
  void closeCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** Starts the test's cluster; servers serve the fabric transport too if {@code transport} is. */
  TestCluster startCluster(Transport transport) throws Exception {
    cluster = new TestCluster(zooKeeper.connectString(), directory, transport == Transport.FABRIC);
    return cluster;
  }

  static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }

  /** Waits for {@code condition}, polling, failing after {@code timeout}. */
  static void awaitCondition(String what, Duration timeout, BooleanSupplier condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("not within " + timeout + ": " + what);
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
    }
  }

  /** Waits until {@code client}'s map holds {@code region} as given. */
  static void awaitRegion(KvsClient client, RegionDescriptor region) {
    awaitCondition(
        "the client's map has " + region,
        Duration.ofSeconds(10),
        () -> client.regionMap().byId(region.id()).map(region::equals).orElse(false));
  }
}
