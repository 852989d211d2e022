package io.kvs.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.control.HeldRegion;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The master's balancer against a simulated cluster: each pass it plans, the map takes its changes,
 * and members catch up (a joining backup is in sync one pass after it joined) -- what converges,
 * what stays still, and the limits it keeps.
 */
class BalancerTest {
  private static final Duration INTERVAL = Duration.ofSeconds(10);
  private static final BalancerOptions OPTIONS =
      new BalancerOptions(true, INTERVAL, 2, Duration.ofSeconds(60));

  /** The map, the clock and the balancer of one simulated cluster. */
  private static final class Cluster {
    final Map<Long, RegionDescriptor> regions = new TreeMap<>();
    final Set<String> live = new HashSet<>();
    final Set<String> decommissioned = new HashSet<>();
    final Set<Long> merging = new HashSet<>();
    boolean switchedOff;
    final ClusterConfig config;
    long now = 1_000_000_000L;
    final Balancer balancer;
    int changes;
    int mostMoving;

    /** Requests a second each region's clients send (none: idle). */
    final Map<Long, Double> rates = new HashMap<>();

    /** What each region's primary has served since it became primary: its counter, by primary. */
    final Map<Long, Map.Entry<String, Long>> served = new HashMap<>();

    Cluster(int replication, ReplicationMode mode, BalancerOptions options) {
      config = new ClusterConfig(8, replication, mode, List.of(), 1);
      balancer =
          new Balancer(
              options, new MasterMetrics(new SimpleMeterRegistry(), () -> true), () -> now);
    }

    void add(long id, String primary, String... backups) {
      regions.put(
          id,
          new RegionDescriptor(
              id,
              new byte[] {(byte) id},
              new byte[] {(byte) (id + 1)},
              primary,
              List.of(backups),
              List.of(),
              1,
              RegionState.OPEN));
    }

    /** What every live server holds: the map's regions at their epochs, in their roles. */
    Map<String, Map<Long, HeldRegion>> held() {
      Map<String, Map<Long, HeldRegion>> held = new HashMap<>();
      live.forEach(server -> held.put(server, new HashMap<>()));
      for (RegionDescriptor region : regions.values()) {
        for (String member : region.members()) {
          if (held.containsKey(member)) {
            RegionRole role = region.roleOf(member);
            Map.Entry<String, Long> counter = served.get(region.id());
            long requests =
                role == RegionRole.PRIMARY && counter != null && counter.getKey().equals(member)
                    ? counter.getValue()
                    : 0;
            held.get(member)
                .put(
                    region.id(),
                    new HeldRegion(
                        region.id(),
                        region.epoch(),
                        role,
                        false,
                        false,
                        List.of(),
                        List.of(),
                        requests));
          }
        }
      }
      return held;
    }

    /**
     * One pass: joining backups of the last pass are in sync now, regions opened, then the balancer
     * plans and the map takes its changes. Returns how many regions it changed.
     */
    int pass() {
      regions.replaceAll((id, region) -> region.withBackupsInSync().withState(RegionState.OPEN));
      for (RegionDescriptor region : regions.values()) {
        Map.Entry<String, Long> counter = served.get(region.id());
        long before =
            counter != null && counter.getKey().equals(region.primary()) ? counter.getValue() : 0;
        long more = (long) (rates.getOrDefault(region.id(), 0.0) * INTERVAL.toSeconds());
        served.put(region.id(), Map.entry(region.primary(), before + more));
      }
      balancer.plan(
          new Balancer.View(
              List.copyOf(regions.values()),
              live,
              held(),
              decommissioned,
              false,
              switchedOff,
              config,
              merging));
      int changed = 0;
      for (RegionDescriptor region : List.copyOf(regions.values())) {
        RegionDescriptor next = balancer.next(region);
        if (next != null) {
          assertThat(next.epoch()).isGreaterThan(region.epoch());
          regions.put(region.id(), next);
          changed++;
        }
      }
      changes += changed;
      mostMoving = Math.max(mostMoving, Balancer.moving(regions.values(), config));
      now += INTERVAL.toNanos();
      return changed;
    }

    /**
     * Plans on the map as it is (nothing caught up, the clock as it is), with a move request
     * pending or not; returns the changes planned, without applying them.
     */
    List<RegionDescriptor> planOnly(boolean requestsPending) {
      balancer.plan(
          new Balancer.View(
              List.copyOf(regions.values()),
              live,
              held(),
              decommissioned,
              requestsPending,
              switchedOff,
              config,
              merging));
      List<RegionDescriptor> planned = new ArrayList<>();
      for (RegionDescriptor region : regions.values()) {
        RegionDescriptor next = balancer.next(region);
        if (next != null) {
          planned.add(next);
        }
      }
      return planned;
    }

    /**
     * Passes until none changed anything for longer than a moved region rests (at most {@code
     * limit}); returns how many ran.
     */
    int settle(int limit) {
      long still = OPTIONS.regionQuiet().toNanos() / INTERVAL.toNanos() + 2;
      int unchanged = 0;
      for (int i = 1; i <= limit; i++) {
        unchanged = pass() == 0 ? unchanged + 1 : 0;
        if (unchanged > still) {
          return i;
        }
      }
      return limit;
    }

    /** Runs {@code passes} passes and asserts that none changed the map. */
    void assertStill(int passes) {
      int before = changes;
      for (int i = 0; i < passes; i++) {
        pass();
      }
      assertThat(changes).as("changes in %d passes of a settled cluster", passes).isEqualTo(before);
    }

    Map<String, Integer> replicas() {
      Map<String, Integer> counts = new TreeMap<>();
      live.forEach(server -> counts.put(server, 0));
      regions.values().forEach(r -> r.members().forEach(m -> counts.merge(m, 1, Integer::sum)));
      return counts;
    }

    Map<String, Integer> leads() {
      Map<String, Integer> counts = new TreeMap<>();
      live.forEach(server -> counts.put(server, 0));
      regions.values().forEach(r -> counts.merge(r.primary(), 1, Integer::sum));
      return counts;
    }
  }

  /** Six regions at replication 2 spread evenly over s1..s3 (each leads two, holds four). */
  private static Cluster evenThree(BalancerOptions options) {
    Cluster cluster = new Cluster(2, ReplicationMode.SEND_INDEX, options);
    cluster.live.addAll(List.of("s1", "s2", "s3"));
    String[] servers = {"s1", "s2", "s3"};
    for (int i = 0; i < 6; i++) {
      cluster.add(i + 1, servers[i % 3], servers[(i + 1) % 3]);
    }
    return cluster;
  }

  private static int spread(Map<String, Integer> counts) {
    int most = counts.values().stream().mapToInt(Integer::intValue).max().orElse(0);
    int least = counts.values().stream().mapToInt(Integer::intValue).min().orElse(0);
    return most - least;
  }

  @Test
  void aBalancedClusterMakesNoMove() {
    Cluster cluster = evenThree(OPTIONS);
    for (int i = 0; i < 20; i++) {
      assertThat(cluster.pass()).isZero();
    }
    assertThat(cluster.changes).isZero();
  }

  @Test
  void aServerThatJoinsTakesItsShareOfReplicasAndLeadership() {
    Cluster cluster = evenThree(OPTIONS);
    cluster.live.add("s4");
    int passes = cluster.settle(100);
    assertThat(passes).isLessThan(100);
    Map<String, Integer> replicas = cluster.replicas();
    assertThat(spread(replicas)).as("replicas %s", replicas).isLessThanOrEqualTo(1);
    assertThat(replicas.get("s4")).isEqualTo(3); // 12 replicas over 4 servers
    Map<String, Integer> leads = cluster.leads();
    assertThat(leads.values()).as("leads %s", leads).allMatch(n -> n <= 2); // ceil(6 / 4)
    assertThat(leads.get("s4")).isPositive();
    assertThat(cluster.regions.values())
        .allMatch(region -> region.members().size() == 2 && region.joining().isEmpty());
    assertThat(cluster.mostMoving).isLessThanOrEqualTo(OPTIONS.movesInFlight());
    // ...and then stays still.
    cluster.assertStill(20);
  }

  @Test
  void leadershipReturnsToAServerThatRestartedAsABackup() {
    // s3 came back after a failover: a backup of its regions, leading none.
    Cluster cluster = new Cluster(2, ReplicationMode.SEND_INDEX, OPTIONS);
    cluster.live.addAll(List.of("s1", "s2", "s3"));
    cluster.add(1, "s1", "s2");
    cluster.add(2, "s1", "s3");
    cluster.add(3, "s2", "s3");
    cluster.add(4, "s2", "s1");
    cluster.add(5, "s1", "s3");
    cluster.add(6, "s2", "s3");
    cluster.settle(50);
    assertThat(cluster.leads())
        .containsEntry("s1", 2)
        .containsEntry("s2", 2)
        .containsEntry("s3", 2);
    assertThat(spread(cluster.replicas())).isLessThanOrEqualTo(1);
  }

  @Test
  void leadershipFollowsLoad() {
    Cluster cluster = evenThree(OPTIONS);
    cluster.rates.put(1L, 2_000.0); // led by s1
    for (long id = 2; id <= 6; id++) {
      cluster.rates.put(id, 200.0);
    }
    cluster.settle(100);
    Map<String, Integer> leads = cluster.leads();
    assertThat(cluster.regions.get(1L).primary()).isEqualTo("s1");
    assertThat(leads).as("leads %s", leads).containsEntry("s1", 1);
    assertThat(leads.get("s2") + leads.get("s3")).isEqualTo(5);
    // Replicas stay where they were: load moves only leadership.
    assertThat(cluster.replicas().values()).allMatch(n -> n == 4);
    // The same load again and again: nothing moves back.
    cluster.assertStill(30);
  }

  @Test
  void anIdleClusterCountsRegions() {
    Cluster cluster = evenThree(OPTIONS);
    cluster.rates.put(1L, 20.0); // busier than the rest, but below the floor: noise
    cluster.settle(50);
    assertThat(cluster.changes).isZero();
  }

  @Test
  void roundsKeepTheirIntervalAndTheMovesInFlightTheirBound() {
    Cluster cluster = evenThree(OPTIONS);
    cluster.live.add("s4");
    List<RegionDescriptor> first = cluster.planOnly(false);
    assertThat(first).hasSize(2).allMatch(region -> region.joining().equals(List.of("s4")));
    // The moves went in, the backups are still joining; even with the interval past, the two
    // regions moving use the whole budget.
    first.forEach(region -> cluster.regions.put(region.id(), region.withState(RegionState.OPEN)));
    cluster.now += INTERVAL.toNanos();
    assertThat(cluster.planOnly(false)).isEmpty();
    // In sync now, but within the interval: only the surpluses go, nothing new starts.
    cluster.regions.replaceAll((id, region) -> region.withBackupsInSync());
    cluster.now += INTERVAL.toNanos() / 2;
    List<RegionDescriptor> second = cluster.planOnly(false);
    assertThat(second)
        .hasSize(2)
        .allMatch(region -> region.members().size() == 2 && region.members().contains("s4"));
  }

  @Test
  void nothingMovesWhileTheClusterNeedsRepairOrAnOperatorsChange() {
    Cluster cluster = evenThree(OPTIONS);
    cluster.live.add("s4");
    // s2 is not live: its regions need recovery first.
    cluster.live.remove("s2");
    assertThat(cluster.pass()).isZero();
    cluster.live.add("s2");
    // A decommission in progress.
    cluster.decommissioned.add("s1");
    assertThat(cluster.pass()).isZero();
    cluster.decommissioned.clear();
    // A move request pending.
    assertThat(cluster.planOnly(true)).isEmpty();
    // Quiet again: it moves.
    assertThat(cluster.pass()).isPositive();
  }

  /** A live s4 joins region 1 as a backup (the pass after next finds it in sync). */
  private static void s4JoinsRegionOne(Cluster cluster) {
    cluster.live.add("s4");
    RegionDescriptor region = cluster.regions.get(1L);
    List<String> backups = new ArrayList<>(region.backups());
    backups.add("s4");
    cluster.regions.put(1L, region.reassigned(region.primary(), backups, List.of("s4")));
  }

  @Test
  void switchedOffItOnlyFinishesAMoveBegun() {
    Cluster cluster = evenThree(OPTIONS.withEnabled(false));
    // A move the balancer (of a master since failed) began: s4 joined region 1 and is in sync.
    s4JoinsRegionOne(cluster);
    cluster.settle(20);
    RegionDescriptor trimmed = cluster.regions.get(1L);
    assertThat(trimmed.members()).hasSize(2).contains("s4");
    assertThat(cluster.changes).isEqualTo(1);
  }

  @Test
  void aRegionBeingMergedKeepsTheReplicaItsMergeAdded() {
    Cluster cluster = evenThree(OPTIONS.withEnabled(false));
    // A merge's step added s4 to region 1 (its neighbour's group holds s4); its next step, not the
    // surplus rule, chooses which replica leaves.
    s4JoinsRegionOne(cluster);
    cluster.merging.add(1L);
    cluster.settle(20);
    assertThat(cluster.regions.get(1L).members()).hasSize(3);
    assertThat(cluster.changes).isZero();
    cluster.merging.clear();
    cluster.settle(20);
    assertThat(cluster.regions.get(1L).members()).hasSize(2);
  }

  @Test
  void anOperatorsSwitchStopsItUntilSwitchedOnAgain() {
    Cluster cluster = evenThree(OPTIONS);
    cluster.live.add("s4");
    cluster.switchedOff = true;
    for (int i = 0; i < 20; i++) {
      assertThat(cluster.pass()).isZero();
    }
    cluster.switchedOff = false;
    assertThat(cluster.pass()).isPositive();
  }

  @Test
  void buildIndexMovesLeadershipButNoReplica() {
    Cluster cluster = new Cluster(2, ReplicationMode.BUILD_INDEX, OPTIONS);
    cluster.live.addAll(List.of("s1", "s2", "s3"));
    for (int i = 1; i <= 6; i++) {
      cluster.add(i, "s1", i % 2 == 0 ? "s2" : "s3");
    }
    cluster.settle(50);
    assertThat(cluster.leads().values()).allMatch(n -> n == 2);
    assertThat(cluster.replicas()).containsEntry("s1", 6);
  }
}
