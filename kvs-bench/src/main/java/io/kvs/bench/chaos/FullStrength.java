package io.kvs.bench.chaos;

import io.kvs.client.KvsClient;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.ControlClient;
import io.kvs.core.control.HeldRegion;
import io.kvs.core.security.SecurityOptions;
import io.kvs.master.status.RegionHealth;
import io.kvs.master.status.ServerProbe;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Whether the cluster is back at full strength: every process runs; every server is registered,
 * none decommissioned, no move pending; every master takes part in the election; and every region
 * is {@code serving} as its members report it (control {@code list}, judged as the status page
 * judges it: OPEN, its replication factor of members, none joining, each member holding it at the
 * map's epoch in its role), its primary reports every backup in sync and no stream failed, and it
 * takes a write (a key of the campaign's own at the region's start). Asking the servers, not
 * trusting the map alone, matters after a quick restart: the map still shows the old group until
 * the master notices that a member lost it; and writing matters after a network cut: a stream whose
 * packets were dropped fails only when a write has waited for it past the stall timeout (2 s), and
 * until the master reopens the region no write is acknowledged.
 */
final class FullStrength implements AutoCloseable {
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);
  private static final Duration PROBE_WAIT = Duration.ofSeconds(3);
  private static final long POLL_MILLIS = 250;
  private static final Duration CANARY_TIMEOUT = Duration.ofSeconds(3);
  private static final byte[] CANARY_VALUE = "canary".getBytes(StandardCharsets.US_ASCII);

  private final ChaosCluster cluster;
  private final ControlClient control;
  private final ServerProbe probe;
  private final KvsClient canaries;

  FullStrength(ChaosCluster cluster) {
    this.cluster = cluster;
    this.canaries = cluster.client(CANARY_TIMEOUT);
    this.control =
        new ControlClient(
            CALL_TIMEOUT,
            SecurityOptions.forClusterDirectory(
                cluster.layout().dir().toAbsolutePath().normalize(), "admin"));
    this.probe = new ServerProbe(control, CALL_TIMEOUT, Duration.ZERO);
  }

  /** Why the cluster is not at full strength now, or empty if it is. */
  Optional<String> missing() throws Exception {
    Optional<String> process = cluster.processMissing();
    if (process.isPresent()) {
      return process;
    }
    ChaosCluster.Layout layout = cluster.layout();
    Map<String, ServerInfo> servers = cluster.servers();
    Set<String> absent = new TreeSet<>(layout.servers());
    absent.removeAll(servers.keySet());
    if (!absent.isEmpty()) {
      return Optional.of("not registered: " + absent);
    }
    Set<String> decommissioned = cluster.admin().decommissioned();
    if (!decommissioned.isEmpty()) {
      return Optional.of("decommissioned: " + decommissioned);
    }
    if (!cluster.admin().moves().isEmpty()) {
      return Optional.of("moves pending: " + cluster.admin().moves().keySet());
    }
    List<String> election = cluster.election();
    if (election.size() != layout.masters().size()) {
      return Optional.of("masters in the election: " + election);
    }
    RegionMap map = cluster.regions();
    if (!map.isComplete()) {
      return Optional.of("the map does not cover the key space: " + map.regions());
    }
    Map<String, Map<Long, HeldRegion>> held = new HashMap<>();
    probe
        .probeAll(servers.values(), PROBE_WAIT)
        .forEach((id, answer) -> held.put(id, answer.answered() ? answer.held() : null));
    for (RegionDescriptor region : map.regions()) {
      RegionHealth health = RegionHealth.of(region, held, layout.replication());
      if (!health.health().equals(RegionHealth.SERVING)) {
        return Optional.of(
            "region " + region.id() + " " + health.health() + " (" + health.detail() + ")");
      }
      HeldRegion primary = held.get(region.primary()).get(region.id());
      if (primary.replicationFailed() || !primary.caughtUp()) {
        return Optional.of(
            "region "
                + region.id()
                + ": its primary "
                + region.primary()
                + " reports backups in sync "
                + primary.inSync()
                + ", failed "
                + primary.failed());
      }
    }
    for (RegionDescriptor region : map.regions()) {
      try {
        canaries.put(canary(region), CANARY_VALUE);
      } catch (RuntimeException e) {
        return Optional.of("region " + region.id() + " takes no write: " + e.getMessage());
      }
    }
    return Optional.empty();
  }

  /** The primaries of the regions that take no write now (what an operator would restart). */
  Set<String> primariesTakingNoWrite() throws Exception {
    Set<String> primaries = new TreeSet<>();
    for (RegionDescriptor region : cluster.regions().regions()) {
      try {
        canaries.put(canary(region), CANARY_VALUE);
      } catch (RuntimeException e) {
        if (!region.primary().isEmpty()) {
          primaries.add(region.primary());
        }
      }
    }
    return primaries;
  }

  /**
   * Waits until the cluster is at full strength; returns empty once it is, or why not when {@code
   * timeout} ran out.
   */
  Optional<String> await(Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      Optional<String> missing = missing();
      if (missing.isEmpty()) {
        return missing;
      }
      if (System.nanoTime() > deadline) {
        return Optional.of(
            "not at full strength within " + timeout.toSeconds() + " s: " + missing.get());
      }
      // Recovery shows only in ZooKeeper and the servers' answers: poll them.
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS));
    }
  }

  /** The campaign's canary key of {@code region}: its start, a zero byte, "canary". */
  private static byte[] canary(RegionDescriptor region) {
    byte[] start = region.start().length == 0 ? new byte[] {0} : region.start();
    byte[] key = Arrays.copyOf(start, start.length + 7);
    System.arraycopy("canary".getBytes(StandardCharsets.US_ASCII), 0, key, start.length + 1, 6);
    return key;
  }

  @Override
  public void close() {
    canaries.close();
    probe.close();
    control.close();
  }
}
