package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.client.KvsClient;
import io.kvs.client.Transport;
import io.kvs.core.cli.Processes;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionState;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two masters: when the active one is stopped the standby takes over and recovers a stopped
 * server's regions; and an active master killed in the middle of a recovery (some regions moved,
 * others not yet) is replaced by one that finishes it from what the map records.
 */
class MasterFailoverIT {
  private static final int REGIONS = 8;
  private static final String SPLITS = "b,d,f,h,k,m,p";
  private static final int KEYS = 500;

  // Kept when a test fails: the processes' logs are in it.
  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  private ProcessCluster cluster;

  @AfterEach
  void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void theStandbyMasterTakesOverAndStillReopensRegions() throws Exception {
    cluster =
        ProcessCluster.start(
            dir,
            "--servers",
            "3",
            "--regions",
            Integer.toString(REGIONS),
            "--replication",
            "2",
            "--masters",
            "2",
            // Passed through to the masters (checked below).
            "--split-points",
            SPLITS);
    try (KvsClient client = cluster.client(Transport.FABRIC)) {
      ProcessCluster.awaitAllOpen(client, REGIONS, Duration.ofSeconds(30));
      assertThat(
              client.regionMap().regions().stream()
                  .skip(1)
                  .map(region -> new String(region.start(), StandardCharsets.UTF_8))
                  .collect(Collectors.joining(",")))
          .isEqualTo(SPLITS);
      for (int i = 0; i < KEYS; i++) {
        client.put(TestKeys.key("failover", i), TestKeys.value("failover", i, 0));
      }

      String active = await(cluster::activeMaster, "an active master");
      String standby = active.equals("m1") ? "m2" : "m1";
      cluster.stopProcess("master-" + active);
      String successor =
          await(
              () -> cluster.activeMaster().filter(id -> !id.equals(active)), "a new active master");
      assertThat(successor).isEqualTo(standby);

      RegionMap before = client.regionMap();
      cluster.stopProcess("server-s1");
      // The new master recovers every region s1 was in: promotes a backup where it led, shrinks
      // the group, then re-replicates onto the third server.
      ProcessCluster.awaitCondition(
          "the new master moves every region off s1; map: " + client.regionMap().regions(),
          Duration.ofSeconds(60),
          () ->
              client.regionMap().regions().stream()
                  .allMatch(
                      region ->
                          region.state() == RegionState.OPEN && !region.members().contains("s1")));
      ProcessCluster.awaitFullStrength(client, REGIONS, 2, Duration.ofSeconds(60));
      for (RegionDescriptor region : client.regionMap().regions()) {
        RegionDescriptor old = before.byId(region.id()).orElseThrow();
        if (old.members().contains("s1")) {
          assertThat(region.epoch())
              .as("epoch of region %d", region.id())
              .isGreaterThan(old.epoch());
        }
      }
      cluster.startServer("s1");
      ProcessCluster.awaitFullStrength(client, REGIONS, 2, Duration.ofSeconds(90));

      for (int i = 0; i < KEYS; i++) {
        assertThat(client.get(TestKeys.key("failover", i)))
            .as("key %d", i)
            .hasValue(TestKeys.value("failover", i, 0));
      }
      client.put(TestKeys.key("failover", KEYS), TestKeys.value("failover", KEYS, 1));
      assertThat(client.get(TestKeys.key("failover", KEYS)))
          .hasValue(TestKeys.value("failover", KEYS, 1));
    }
  }

  @Test
  void aMasterKilledInTheMiddleOfARecoveryIsReplacedByOneThatFinishesIt() throws Exception {
    cluster =
        ProcessCluster.start(
            dir,
            "--servers",
            "3",
            "--regions",
            Integer.toString(REGIONS),
            "--replication",
            "2",
            "--masters",
            "2",
            "--l0-size",
            ProcessCluster.SMALL_L0);
    try (KvsClient client = cluster.client(Transport.TCP)) {
      ProcessCluster.awaitFullStrength(client, REGIONS, 2, Duration.ofSeconds(60));
      // Data in every region's device levels and logs: each region's recovery (a promotion that
      // adopts and replays them, a catch-up that ships them) takes a while, and verify compares
      // them.
      Bulk.fillLevels(client, "midway", REGIONS);
      String active = await(cluster::activeMaster, "an active master");
      ProcessHandle master = cluster.process("master-" + active);
      RegionMap before = client.regionMap();
      List<Long> held =
          before.regions().stream()
              .filter(r -> r.members().contains("s1"))
              .map(RegionDescriptor::id)
              .toList();
      cluster.inject("kill", "s1");
      // The first recovery step is in the map: a region of s1's moved on without it. The master
      // is killed at once (SIGKILL from here, no tool to start), in the middle of the recovery.
      ProcessCluster.awaitCondition(
          "a recovery step recorded; map: " + client.regionMap().regions(),
          Duration.ofSeconds(60),
          () ->
              client.regionMap().regions().stream()
                  .anyMatch(
                      r ->
                          !r.members().contains("s1")
                              && r.epoch() > before.byId(r.id()).orElseThrow().epoch()));
      master.destroyForcibly();
      assertThat(Processes.awaitExit(master, Duration.ofSeconds(30))).isTrue();
      // What the killed master left in the map (its successor has not acted yet: it waits for
      // the killed one's ZooKeeper session, 10 s, to expire).
      RegionMap left = cluster.regionMap();
      long moved =
          held.stream().filter(id -> !left.byId(id).orElseThrow().members().contains("s1")).count();
      long recovered =
          held.stream()
              .map(id -> left.byId(id).orElseThrow())
              .filter(
                  r ->
                      r.state() == RegionState.OPEN
                          && !r.members().contains("s1")
                          && r.members().size() == 2
                          && r.joining().isEmpty())
              .count();
      System.out.printf(
          "MasterFailoverIT: master %s killed with %d of the %d regions of s1 moved off it and %d"
              + " recovered (whole again)%n",
          active, moved, held.size(), recovered);
      assertThat(recovered)
          .as(
              "regions of s1 whole again when the master was killed (it must die mid-recovery);"
                  + " map: %s",
              left.regions())
          .isLessThan(held.size());
      String successor =
          await(
              () -> cluster.activeMaster().filter(id -> !id.equals(active)), "a new active master");
      assertThat(successor).isNotEqualTo(active);
      ProcessCluster.awaitFullStrength(client, REGIONS, 2, Duration.ofSeconds(90));
      assertThat(client.regionMap().regions())
          .allSatisfy(region -> assertThat(region.members()).doesNotContain("s1"));
      List<byte[]> keys = new java.util.ArrayList<>();
      for (int i = 0; i < REGIONS * Bulk.KEYS_PER_REGION; i++) {
        keys.add(TestKeys.key("midway", i));
      }
      List<Optional<byte[]>> values = client.multiGet(keys);
      for (int i = 0; i < keys.size(); i++) {
        assertThat(values.get(i).orElse(null)).as("key %d", i).isEqualTo(Bulk.value("midway", i));
      }
      cluster.inject("restart", "s1");
      cluster.verify();
    }
  }

  /** A lookup that may come up empty for a while (an election in progress). */
  private interface Lookup {
    Optional<String> get() throws Exception;
  }

  private static String await(Lookup lookup, String what) {
    String[] found = new String[1];
    ProcessCluster.awaitCondition(
        what,
        Duration.ofSeconds(60),
        () -> {
          try {
            found[0] = lookup.get().orElse(null);
          } catch (Exception e) {
            found[0] = null; // ZooKeeper busy: ask again
          }
          return found[0] != null;
        });
    return found[0];
  }
}
