package io.kvs.tools;

import static org.assertj.core.api.Assertions.fail;

import io.kvs.client.KvsClient;
import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.master.EmbeddedZooKeeper;
import io.kvs.master.Master;
import io.kvs.master.MasterOptions;
import io.kvs.server.RegionServer;
import io.kvs.server.ServerOptions;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A cluster in this JVM for tests of the tools built on the client: an embedded ZooKeeper, one
 * master and three region servers (TCP only), regions at replication 1. {@link #start} returns once
 * every region is open.
 */
public final class InProcessCluster implements AutoCloseable {
  private static final Duration OPEN_WITHIN = Duration.ofSeconds(30);

  private final String name;
  private final EmbeddedZooKeeper zookeeper;
  private final List<RegionServer> servers = new ArrayList<>();
  private Master master;

  private InProcessCluster(String name, EmbeddedZooKeeper zookeeper) {
    this.name = name;
    this.zookeeper = zookeeper;
  }

  /**
   * Starts cluster {@code name} with {@code regions} regions split at {@code splits} (empty: the
   * uniform split), its data under {@code directory}.
   */
  public static InProcessCluster start(
      Path directory, String name, int regions, List<byte[]> splits) throws Exception {
    InProcessCluster cluster =
        new InProcessCluster(name, EmbeddedZooKeeper.start(directory.resolve("zookeeper"), 0));
    try {
      for (String id : List.of("s1", "s2", "s3")) {
        cluster.servers.add(
            RegionServer.start(
                ServerOptions.builder(id, directory.resolve(id), cluster.zookeeper())
                    .cluster(name)
                    .memoryBudgetBytes(64L << 20)
                    .build()));
      }
      cluster.master =
          Master.start(
              new MasterOptions(
                  "m1",
                  cluster.zookeeper(),
                  name,
                  new ClusterConfig(regions, 1, ReplicationMode.NONE, splits),
                  3,
                  Duration.ofMillis(200),
                  Duration.ofSeconds(20)));
      cluster.awaitOpen(regions);
      return cluster;
    } catch (Exception | AssertionError e) {
      cluster.close();
      throw e;
    }
  }

  /** The ZooKeeper connect string. */
  public String zookeeper() {
    return zookeeper.connectString();
  }

  public String name() {
    return name;
  }

  /** Its region servers, s1 to s3. */
  public List<RegionServer> servers() {
    return List.copyOf(servers);
  }

  /** Its master. */
  public Master master() {
    return master;
  }

  private void awaitOpen(int regions) throws Exception {
    try (KvsClient client = KvsClient.builder().zookeeper(zookeeper()).cluster(name).build()) {
      long deadline = System.nanoTime() + OPEN_WITHIN.toNanos();
      while (client.regionMap().size() != regions
          || !client.regionMap().regions().stream().allMatch(r -> r.state() == RegionState.OPEN)) {
        if (System.nanoTime() > deadline) {
          fail("regions not all open within " + OPEN_WITHIN + ": " + client.regionMap().regions());
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // the map has no event to await
      }
    }
  }

  @Override
  public void close() throws IOException {
    if (master != null) {
      master.close();
    }
    for (RegionServer server : servers) {
      server.close();
    }
    zookeeper.close();
  }
}
