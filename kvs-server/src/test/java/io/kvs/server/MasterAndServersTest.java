package io.kvs.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.MoveRequest;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.control.ControlClient;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlReply;
import io.kvs.core.control.HeldRegion;
import io.kvs.core.security.ClusterSecret;
import io.kvs.core.security.SecurityOptions;
import io.kvs.core.security.ZooKeeperAcls;
import io.kvs.master.BalancerOptions;
import io.kvs.master.EmbeddedZooKeeper;
import io.kvs.master.Master;
import io.kvs.master.MasterOptions;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A master and region servers in one JVM over a real ZooKeeper: assignment, restart, failover.
 * Every process holds the cluster secret, so the control RPC and the fabric bootstrap (replication)
 * authenticate throughout.
 */
class MasterAndServersTest {
  private static final SecurityOptions SECURITY =
      SecurityOptions.withSecret(ClusterSecret.of("master-and-servers-test-secret".getBytes()));

  @TempDir Path directory;
  private EmbeddedZooKeeper zookeeper;
  private CuratorFramework curator;
  private final ClusterPaths paths = new ClusterPaths("test");
  private final Map<String, RegionServer> servers = new HashMap<>();
  private final List<Master> masters = new ArrayList<>();

  @BeforeEach
  void startZooKeeper() throws Exception {
    zookeeper = EmbeddedZooKeeper.start(directory.resolve("zookeeper"), 0);
    curator = CuratorFrameworkFactory.newClient(zookeeper.connectString(), new RetryOneTime(100));
    curator.start();
  }

  @AfterEach
  void stopAll() throws Exception {
    for (Master master : masters) {
      master.close();
    }
    for (RegionServer server : servers.values()) {
      server.close();
    }
    curator.close();
    zookeeper.close();
  }

  private RegionServer startServer(String id) throws Exception {
    RegionServer server =
        RegionServer.start(
            ServerOptions.builder(id, directory.resolve(id), zookeeper.connectString())
                .cluster("test")
                .fabricProvider("tcp") // replication between servers runs over the fabric transport
                .memoryBudgetBytes(64L << 20)
                .security(SECURITY)
                .build());
    servers.put(id, server);
    return server;
  }

  private Master startMaster(String id, ClusterConfig config, int expectedServers)
      throws Exception {
    return startMaster(id, config, expectedServers, BalancerOptions.DEFAULT);
  }

  private Master startMaster(
      String id, ClusterConfig config, int expectedServers, BalancerOptions balancer)
      throws Exception {
    Master master =
        Master.start(
            new MasterOptions(
                    id,
                    zookeeper.connectString(),
                    "test",
                    config,
                    expectedServers,
                    Duration.ofMillis(200),
                    Duration.ofSeconds(10))
                .withSecurity(SECURITY)
                .withBalancer(balancer));
    masters.add(master);
    return master;
  }

  private RegionMap regionMap() throws Exception {
    List<RegionDescriptor> regions = new ArrayList<>();
    if (curator.checkExists().forPath(paths.regions()) == null) {
      return RegionMap.empty();
    }
    for (String child : curator.getChildren().forPath(paths.regions())) {
      regions.add(
          ClusterJson.decodeRegion(curator.getData().forPath(paths.regions() + "/" + child)));
    }
    return RegionMap.of(regions);
  }

  private RegionMap awaitMap(Predicate<RegionMap> condition) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    RegionMap map = regionMap();
    while (!condition.test(map)) {
      assertThat(System.nanoTime())
          .as("region map never got there: %s", map.regions())
          .isLessThan(deadline);
      Thread.onSpinWait();
      map = regionMap();
    }
    return map;
  }

  private static boolean allOpen(RegionMap map, int regions) {
    return map.size() == regions
        && map.regions().stream().allMatch(r -> r.state() == RegionState.OPEN);
  }

  @Test
  void theMasterSpreadsRegionsAndEveryServerOpensItsShare() throws Exception {
    for (String id : List.of("s1", "s2", "s3")) {
      startServer(id);
    }
    startMaster("m1", new ClusterConfig(12, 2, ReplicationMode.BUILD_INDEX, List.of()), 3);
    RegionMap map = awaitMap(m -> allOpen(m, 12));
    assertThat(map.isComplete()).isTrue();
    Map<String, Integer> primaries = new HashMap<>();
    Map<String, Integer> backups = new HashMap<>();
    for (RegionDescriptor region : map.regions()) {
      assertThat(region.backups()).hasSize(1).doesNotContain(region.primary());
      primaries.merge(region.primary(), 1, Integer::sum);
      backups.merge(region.backups().get(0), 1, Integer::sum);
    }
    assertThat(primaries)
        .containsOnlyKeys("s1", "s2", "s3")
        .allSatisfy((s, n) -> assertThat(n).isEqualTo(4));
    assertThat(backups)
        .containsOnlyKeys("s1", "s2", "s3")
        .allSatisfy((s, n) -> assertThat(n).isEqualTo(4));
    // Every server holds exactly what the map gives it, at the map's epoch.
    for (RegionServer server : servers.values()) {
      String id = server.info().id();
      List<HeldRegion> expected = new ArrayList<>();
      for (RegionDescriptor region : map.regions()) {
        RegionRole role = region.roleOf(id);
        if (role != null) {
          expected.add(new HeldRegion(region.id(), region.epoch(), role));
        }
      }
      assertThat(server.regions().list())
          .map(held -> new HeldRegion(held.regionId(), held.epoch(), held.role()))
          .containsExactlyInAnyOrderElementsOf(expected);
    }
  }

  @Test
  void aServerStoppedCleanlyAndRestartedGetsItsRegionsBackWithTheirData() throws Exception {
    startServer("s1");
    startServer("s2");
    startMaster("m1", new ClusterConfig(4, 1, ReplicationMode.NONE, List.of()), 2);
    RegionMap map = awaitMap(m -> allOpen(m, 4));
    RegionDescriptor region =
        map.regions().stream().filter(r -> r.primary().equals("s2")).findFirst().orElseThrow();
    byte[] key = region.start().length == 0 ? new byte[] {1} : region.start();
    servers
        .get("s2")
        .regions()
        .engineRegion(region.id())
        .put(key, "kept".getBytes(StandardCharsets.UTF_8));
    servers.remove("s2").close();
    RegionMap offline =
        awaitMap(m -> m.byId(region.id()).orElseThrow().state() == RegionState.OFFLINE);
    long offlineEpoch = offline.byId(region.id()).orElseThrow().epoch();
    assertThat(offlineEpoch).isGreaterThan(region.epoch());
    RegionServer restarted = startServer("s2");
    RegionMap reopened = awaitMap(m -> allOpen(m, 4));
    RegionDescriptor after = reopened.byId(region.id()).orElseThrow();
    assertThat(after.primary()).isEqualTo("s2");
    assertThat(after.epoch()).isGreaterThan(offlineEpoch);
    assertThat(restarted.regions().engineRegion(region.id()).get(key))
        .isEqualTo("kept".getBytes(StandardCharsets.UTF_8));
  }

  /**
   * A close the master did not send (an operator's mistake, a stranger on the control port) raises
   * a server's epoch for a region above the map's: the master learns it from the refusals of its
   * opens and reopens the region above it, so the map never says OPEN for a region no one serves.
   */
  @Test
  void aRegionClosedAboveItsEpochOutOfBandIsReopenedAboveIt() throws Exception {
    for (String id : List.of("s1", "s2")) {
      startServer(id);
    }
    startMaster("m1", new ClusterConfig(2, 2, ReplicationMode.BUILD_INDEX, List.of()), 2);
    RegionDescriptor region = awaitMap(m -> allOpen(m, 2)).regions().get(0);
    long raised = region.epoch() + 10;
    RegionServer primary = servers.get(region.primary());
    try (ControlClient control = new ControlClient(Duration.ofSeconds(10), SECURITY)) {
      ControlReply closed =
          control.call(
              "127.0.0.1",
              primary.info().controlPort(),
              new ControlCommand.Close(region.id(), raised));
      assertThat(closed.isOk()).isTrue();
    }
    RegionMap map =
        awaitMap(
            m -> {
              RegionDescriptor now = m.byId(region.id()).orElseThrow();
              return now.state() == RegionState.OPEN && now.epoch() > raised;
            });
    RegionDescriptor reopened = map.byId(region.id()).orElseThrow();
    for (String member : reopened.members()) {
      assertThat(servers.get(member).regions().list())
          .map(held -> new HeldRegion(held.regionId(), held.epoch(), held.role()))
          .contains(new HeldRegion(reopened.id(), reopened.epoch(), reopened.roleOf(member)));
    }
    // The master's status page records the recovery, step by step, until the region serves again.
    JsonNode recovery = awaitRecovered(masters.get(0), region.id());
    assertThat(recovery.path("steps").toString()).contains("reopened: ");
    assertThat(recovery.path("endedAt").asLong())
        .isGreaterThanOrEqualTo(recovery.path("startedAt").asLong());
  }

  /** The recovery of {@code regionId} the status page of {@code master} shows as recovered. */
  private static JsonNode awaitRecovered(Master master, long regionId) throws Exception {
    HttpClient client = HttpClient.newHttpClient();
    URI uri = URI.create("http://127.0.0.1:" + master.http().port() + "/api/status");
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      String body =
          client
              .send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString())
              .body();
      for (JsonNode recovery : new ObjectMapper().readTree(body).path("recoveries")) {
        if (recovery.path("regionId").asLong() == regionId
            && recovery.path("outcome").asText().equals("recovered")) {
          return recovery;
        }
      }
      assertThat(System.nanoTime())
          .as("no recovery of region %d in %s", regionId, body)
          .isLessThan(deadline);
      Thread.sleep(100); // polling the page as an operator would: no event to wait on
    }
  }

  /**
   * {@code ./kvs admin move} as the master sees it: a request to hand a primary over to its backup
   * is carried out (the old primary becomes the backup, the request is retired); one to a server
   * outside the group is refused with its reason and changes nothing.
   */
  @Test
  void aMoveHandsThePrimaryOverAndAMoveOutsideTheGroupIsRefused() throws Exception {
    for (String id : List.of("s1", "s2", "s3")) {
      startServer(id);
    }
    // The balancer off: it would hand the moved leadership back (the move unbalances it).
    startMaster(
        "m1",
        new ClusterConfig(3, 2, ReplicationMode.BUILD_INDEX, List.of()),
        3,
        BalancerOptions.DEFAULT.withEnabled(false));
    RegionDescriptor region = awaitMap(m -> allOpen(m, 3)).regions().get(0);
    String oldPrimary = region.primary();
    String target = region.backups().get(0);
    curator
        .create()
        .creatingParentsIfNeeded()
        .forPath(paths.move(region.id()), ClusterJson.encode(MoveRequest.to(target)));
    RegionDescriptor moved =
        awaitMap(
                m -> {
                  RegionDescriptor now = m.byId(region.id()).orElseThrow();
                  return now.primary().equals(target) && now.state() == RegionState.OPEN;
                })
            .byId(region.id())
            .orElseThrow();
    assertThat(moved.backups()).containsExactly(oldPrimary);
    assertThat(moved.epoch()).isGreaterThan(region.epoch());
    assertThat(curator.checkExists().forPath(paths.move(region.id()))).isNull();
    assertThat(servers.get(oldPrimary).regions().list())
        .map(held -> new HeldRegion(held.regionId(), held.epoch(), held.role()))
        .contains(new HeldRegion(region.id(), moved.epoch(), RegionRole.BACKUP));

    String outsider =
        List.of("s1", "s2", "s3").stream()
            .filter(id -> !moved.members().contains(id))
            .findFirst()
            .orElseThrow();
    curator.create().forPath(paths.move(region.id()), ClusterJson.encode(MoveRequest.to(outsider)));
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    MoveRequest answered = MoveRequest.to(outsider);
    while (!answered.isRefused() && System.nanoTime() < deadline) {
      Thread.onSpinWait();
      answered = ClusterJson.decodeMove(curator.getData().forPath(paths.move(region.id())));
    }
    assertThat(answered.refused()).contains(outsider + " is no member of region " + region.id());
    assertThat(regionMap().byId(region.id()).orElseThrow()).isEqualTo(moved);
  }

  /**
   * A decommissioned server with no server to replace it (three servers, replication 2 under
   * build-index, which cannot catch a new backup up): its primaries hand over, it leaves every
   * group, and it ends up holding nothing; the groups keep one member each.
   */
  @Test
  void aDecommissionedServerLeavesEveryGroupAndHoldsNothing() throws Exception {
    for (String id : List.of("s1", "s2", "s3")) {
      startServer(id);
    }
    startMaster("m1", new ClusterConfig(6, 2, ReplicationMode.BUILD_INDEX, List.of()), 3);
    awaitMap(m -> allOpen(m, 6));
    curator.create().creatingParentsIfNeeded().forPath(paths.decommissioned("s3"));
    RegionMap drained =
        awaitMap(
            m -> allOpen(m, 6) && m.regions().stream().noneMatch(r -> r.members().contains("s3")));
    assertThat(drained.regions())
        .allSatisfy(region -> assertThat(region.primary()).isIn("s1", "s2"));
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!servers.get("s3").regions().list().isEmpty() && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertThat(servers.get("s3").regions().list()).isEmpty();
  }

  @Test
  void aSecondMasterTakesOverWhenTheFirstStops() throws Exception {
    startServer("s1");
    Master first = startMaster("m1", new ClusterConfig(2, 1, ReplicationMode.NONE, List.of()), 1);
    awaitMap(m -> allOpen(m, 2));
    Master second = startMaster("m2", new ClusterConfig(2, 1, ReplicationMode.NONE, List.of()), 1);
    assertThat(first.isActive()).isTrue();
    assertThat(second.isActive()).isFalse();
    masters.remove(first);
    first.close();
    // The new master acts: a server joining now gets its regions from it.
    startServer("s9");
    servers.remove("s1").close();
    awaitMap(m -> m.regions().stream().allMatch(r -> r.state() == RegionState.OFFLINE));
    assertThat(second.isActive()).isTrue();
    startServer("s1");
    awaitMap(m -> allOpen(m, 2));
  }

  /**
   * A standby whose node left the election (Curator's latch does not always make it again after a
   * lost session; here it is deleted) joins again by itself, and takes over when the active master
   * goes. Without the election's check it stays out and no master leads.
   */
  @Test
  void aStandbyMissingFromTheElectionJoinsAgainAndTakesOver() throws Exception {
    startServer("s1");
    Master first = startMaster("m1", new ClusterConfig(2, 1, ReplicationMode.NONE, List.of()), 1);
    awaitMap(m -> allOpen(m, 2));
    Master second = startMaster("m2", new ClusterConfig(2, 1, ReplicationMode.NONE, List.of()), 1);
    try (CuratorFramework cluster =
        ZooKeeperAcls.apply(
                CuratorFrameworkFactory.builder()
                    .connectString(zookeeper.connectString())
                    .retryPolicy(new RetryOneTime(100)),
                SECURITY.zookeeper())
            .build()) {
      cluster.start();
      String node = awaitElectionNode(cluster, "m2");
      cluster.delete().forPath(paths.masters() + "/" + node);
      String again = awaitElectionNode(cluster, "m2");
      assertThat(again).as("m2's node in the election, made anew").isNotEqualTo(node);
    }
    masters.remove(first);
    first.close();
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!second.isActive()) {
      assertThat(System.nanoTime()).as("m2 never took over").isLessThan(deadline);
      Thread.sleep(20); // polling the latch's state at a bounded rate
    }
    startServer("s9");
    servers.remove("s1").close();
    awaitMap(m -> m.regions().stream().allMatch(r -> r.state() == RegionState.OFFLINE));
  }

  /** The name of {@code id}'s node in the election, once there is one (within 30 s). */
  private String awaitElectionNode(CuratorFramework cluster, String id) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      for (String child : cluster.getChildren().forPath(paths.masters())) {
        byte[] data = cluster.getData().forPath(paths.masters() + "/" + child);
        if (id.equals(new String(data, StandardCharsets.UTF_8))) {
          return child;
        }
      }
      assertThat(System.nanoTime()).as(id + " never in the election").isLessThan(deadline);
      Thread.sleep(20); // polling ZooKeeper at a bounded rate
    }
  }
}
