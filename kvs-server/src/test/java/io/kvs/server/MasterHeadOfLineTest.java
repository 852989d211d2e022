package io.kvs.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.master.EmbeddedZooKeeper;
import io.kvs.master.Master;
import io.kvs.master.MasterOptions;
import io.kvs.server.control.ControlServer;
import io.kvs.server.control.StubRegions;
import io.kvs.server.membership.Membership;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A master over servers that speak the control RPC but hold no data (a {@link StubRegions} behind a
 * real {@link ControlServer}, registered in ZooKeeper as a region server registers): a server whose
 * opens hang delays only the regions it is a member of, and every region's opens keep their order
 * (backups first, in order, then the primary) while regions are opened concurrently.
 */
class MasterHeadOfLineTest {
  private static final String CLUSTER = "hol";

  /** The master's bound on each command: what a hanging open costs the regions waiting for it. */
  private static final Duration CONTROL_TIMEOUT = Duration.ofSeconds(20);

  @TempDir Path directory;
  private EmbeddedZooKeeper zookeeper;
  private CuratorFramework curator;
  private final ClusterPaths paths = new ClusterPaths(CLUSTER);
  private final List<AutoCloseable> closing = new ArrayList<>();
  private final Map<String, StubRegions> stubs = new HashMap<>();

  @BeforeEach
  void startZooKeeper() throws Exception {
    zookeeper = EmbeddedZooKeeper.start(directory.resolve("zookeeper"), 0);
    curator = CuratorFrameworkFactory.newClient(zookeeper.connectString(), new RetryOneTime(100));
    curator.start();
  }

  @AfterEach
  void stopAll() throws Exception {
    stubs.values().forEach(StubRegions::release);
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
    curator.close();
    zookeeper.close();
  }

  private void startStub(StubRegions regions, String id) throws Exception {
    ControlServer control = ControlServer.start(regions, "127.0.0.1", 0);
    closing.add(control);
    stubs.put(id, regions);
    ServerInfo info = new ServerInfo(id, "127.0.0.1", 1, 0, "", control.port());
    closing.add(Membership.register(curator, paths, info, Duration.ofSeconds(10)));
  }

  private void startMaster(ClusterConfig config, int servers) throws Exception {
    closing.add(
        Master.start(
            new MasterOptions(
                "m1",
                zookeeper.connectString(),
                CLUSTER,
                config,
                servers,
                Duration.ofMillis(200),
                CONTROL_TIMEOUT)));
  }

  private RegionMap regionMap() throws Exception {
    List<RegionDescriptor> regions = new ArrayList<>();
    if (curator.checkExists().forPath(paths.regions()) != null) {
      for (String child : curator.getChildren().forPath(paths.regions())) {
        regions.add(
            ClusterJson.decodeRegion(curator.getData().forPath(paths.regions() + "/" + child)));
      }
    }
    return RegionMap.of(regions);
  }

  private RegionMap awaitMap(Duration bound, Predicate<RegionMap> condition) throws Exception {
    long deadline = System.nanoTime() + bound.toNanos();
    RegionMap map = regionMap();
    while (!condition.test(map)) {
      assertThat(System.nanoTime())
          .as("region map never got there within %s: %s", bound, map.regions())
          .isLessThan(deadline);
      LockSupport.parkNanos(10_000_000);
      map = regionMap();
    }
    return map;
  }

  @Test
  void aServerWhoseOpensHangDelaysOnlyItsOwnRegions() throws Exception {
    for (String id : List.of("s1", "s2", "s3")) {
      startStub(new StubRegions(id), id);
    }
    startStub(new StubRegions("s4").hangOpens(), "s4");
    // One region in four leads on s4: with opens sent one after another, the pass would wait out
    // the control timeout for each before opening the regions after it.
    startMaster(new ClusterConfig(16, 1, ReplicationMode.NONE, List.of()), 4);
    awaitMap(Duration.ofSeconds(30), map -> map.size() == 16);
    long created = System.nanoTime();
    RegionMap map =
        awaitMap(
            Duration.ofSeconds(5),
            m ->
                m.regions().stream()
                    .filter(region -> !region.primary().equals("s4"))
                    .allMatch(region -> region.state() == RegionState.OPEN));
    long millis = (System.nanoTime() - created) / 1_000_000;
    List<RegionDescriptor> onSlow =
        map.regions().stream().filter(region -> region.primary().equals("s4")).toList();
    assertThat(onSlow).isNotEmpty().allMatch(region -> region.state() != RegionState.OPEN);
    assertThat(stubs.get("s4").awaitOpening(0)).isTrue();
    // The slow server's regions open once its opens finish.
    stubs.get("s4").release();
    awaitMap(
        Duration.ofSeconds(30),
        m -> m.regions().stream().allMatch(region -> region.state() == RegionState.OPEN));
    System.out.printf(
        "regions on healthy servers OPEN %d ms after the cluster was created%n", millis);
  }

  @Test
  void everyRegionsOpensKeepTheirOrder() throws Exception {
    // Every open, in the order the servers got them: "region epoch server".
    List<String> arrivals = new ArrayList<>();
    for (String id : List.of("s1", "s2", "s3", "s4")) {
      Consumer<RegionDescriptor> record =
          region -> {
            synchronized (arrivals) {
              arrivals.add(region.id() + " " + region.epoch() + " " + id);
            }
          };
      startStub(new StubRegions(id, record), id);
    }
    startMaster(new ClusterConfig(12, 3, ReplicationMode.BUILD_INDEX, List.of()), 4);
    RegionMap map =
        awaitMap(
            Duration.ofSeconds(30),
            m ->
                m.size() == 12
                    && m.regions().stream().allMatch(r -> r.state() == RegionState.OPEN));
    for (RegionDescriptor region : map.regions()) {
      String prefix = region.id() + " " + region.epoch() + " ";
      List<String> expected = new ArrayList<>();
      region.backups().forEach(backup -> expected.add(prefix + backup));
      expected.add(prefix + region.primary());
      List<String> got;
      synchronized (arrivals) {
        got = arrivals.stream().filter(a -> a.startsWith(prefix)).toList();
      }
      assertThat(got).as("opens of region %d", region.id()).isEqualTo(expected);
    }
  }
}
