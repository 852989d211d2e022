package io.kvs.bench.scale;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.master.EmbeddedZooKeeper;
import io.kvs.master.Master;
import io.kvs.master.MasterOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps the master's scale simulation honest: the real master and ZooKeeper over 20 simulated
 * servers bring 200 regions to OPEN with every member holding them as the map says and every backup
 * in sync, and after a simulated server is killed (its session left to expire, as after {@code kill
 * -9}) every region it held is OPEN again on live servers, its group whole.
 */
class SimulatedClusterTest {
  private static final String CLUSTER = "sim";
  private static final int SERVERS = 20;
  private static final int REGIONS = 200;
  private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(2);

  @TempDir Path directory;

  @Test
  void convergesAndRecoversAKilledServersRegions() throws Exception {
    try (EmbeddedZooKeeper zookeeper =
            EmbeddedZooKeeper.start(directory.resolve("zookeeper"), "127.0.0.1", 0, null, 0);
        SimulatedCluster servers =
            SimulatedCluster.start(
                zookeeper.connectString(),
                CLUSTER,
                SERVERS,
                1,
                SESSION_TIMEOUT,
                Duration.ofMillis(100));
        Master master = Master.start(options(zookeeper.connectString()));
        CuratorFramework curator =
            CuratorFrameworkFactory.newClient(zookeeper.connectString(), new RetryOneTime(100))) {
      curator.start();
      ClusterView view = new ClusterView(curator, CLUSTER);
      Map<Long, ClusterView.Versioned> regions =
          await(view, Duration.ofSeconds(20), List.of(), servers);
      assertThat(regions).hasSize(REGIONS);
      assertThat(master.isActive()).isTrue();
      String victim = "s0001"; // the one behind a relay, whose session can expire
      long held =
          regions.values().stream().filter(r -> r.region().members().contains(victim)).count();
      assertThat(held).isPositive();

      servers.kill(victim);
      Map<Long, ClusterView.Versioned> after =
          await(view, Duration.ofSeconds(20), List.of(victim), servers);
      assertThat(after.values())
          .allSatisfy(r -> assertThat(r.region().members()).doesNotContain(victim));
      assertThat(servers.alive()).hasSize(SERVERS - 1);
    }
  }

  private static MasterOptions options(String zookeeper) {
    return new MasterOptions(
        "m1",
        zookeeper,
        CLUSTER,
        new ClusterConfig(REGIONS, 2, ReplicationMode.SEND_INDEX, List.of(), 1),
        SERVERS,
        Duration.ofMillis(500),
        Duration.ofSeconds(10),
        "127.0.0.1",
        0,
        null,
        SESSION_TIMEOUT);
  }

  /**
   * Polls the map until every region is settled ({@link ClusterView#settled}); fails after bound.
   */
  private static Map<Long, ClusterView.Versioned> await(
      ClusterView view, Duration bound, List<String> dead, SimulatedCluster servers)
      throws Exception {
    long deadline = System.nanoTime() + bound.toNanos();
    Map<Long, ClusterView.Versioned> regions = view.regions();
    while (!ClusterView.settled(regions, 2, dead, servers)) {
      assertThat(System.nanoTime())
          .as("regions not settled within %s: %s", bound, regions.values())
          .isLessThan(deadline);
      LockSupport.parkNanos(50_000_000);
      regions = view.regions();
    }
    return regions;
  }
}
