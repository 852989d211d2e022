package io.kvs.tools.local;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.ControlClient;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlReply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;

/**
 * Checks that every region's backups hold what its primary holds: asks each member for a digest of
 * the region ({@link ControlCommand.Digest}: under send-index the device levels, which a backup
 * installs from what the primary shipped; otherwise a full scan) and compares them. A compaction or
 * a write between the primary's digest and a backup's makes them differ without anything being
 * wrong, so a region passes when the primary's digest is the same before and after its backups' and
 * theirs equal it, and is retried until {@code patience} runs out otherwise.
 */
final class LocalVerify {
  private static final Duration CONTROL_TIMEOUT = Duration.ofSeconds(60);
  private static final long RETRY_PAUSE_MS = 200;

  private final ClusterDirectory directory;
  private final Duration patience;

  LocalVerify(ClusterDirectory directory, Duration patience) {
    this.directory = directory;
    this.patience = patience;
  }

  /** One region's outcome. */
  record Outcome(RegionDescriptor region, boolean same, long entries, long levels, String detail) {}

  /** Prints a line per region and a summary; 0 if every region's replicas agree, 1 otherwise. */
  int run() throws Exception {
    Map<String, String> state = directory.load();
    if (state.getOrDefault("zookeeper", "").isEmpty()) {
      System.out.println("no local cluster in " + directory.root() + " (./kvs local start)");
      return 1;
    }
    List<Outcome> outcomes = verify(state.get("zookeeper"), state.get("cluster"));
    System.out.printf(
        "%-4s %-8s %-10s %-7s %10s %6s  %s%n",
        "id", "primary", "backups", "result", "entries", "levels", "detail");
    int same = 0;
    for (Outcome outcome : outcomes) {
      System.out.printf(
          "%-4d %-8s %-10s %-7s %10d %6d  %s%n",
          outcome.region().id(),
          outcome.region().primary(),
          String.join(",", outcome.region().backups()),
          outcome.same() ? "same" : "DIFFER",
          outcome.entries(),
          outcome.levels(),
          outcome.detail());
      same += outcome.same() ? 1 : 0;
    }
    System.out.printf(
        "%n%d of %d regions: backups hold what their primary holds%n", same, outcomes.size());
    return same == outcomes.size() && !outcomes.isEmpty() ? 0 : 1;
  }

  /** Compares the replicas of every region of cluster {@code cluster}. */
  List<Outcome> verify(String zookeeper, String cluster) throws Exception {
    List<Outcome> outcomes = new ArrayList<>();
    try (CuratorFramework curator = LocalStatus.connect(zookeeper);
        ControlClient control = new ControlClient(CONTROL_TIMEOUT, directory.toolSecurity())) {
      ClusterPaths paths = new ClusterPaths(cluster);
      Map<String, ServerInfo> servers = LocalStatus.servers(curator, paths);
      RegionMap map = LocalStatus.regions(curator, paths);
      for (RegionDescriptor region : map.regions()) {
        outcomes.add(verify(region, servers, control));
      }
    }
    return outcomes;
  }

  private Outcome verify(
      RegionDescriptor region, Map<String, ServerInfo> servers, ControlClient control)
      throws InterruptedException {
    if (region.state() != RegionState.OPEN) {
      return new Outcome(region, false, 0, 0, "region is " + region.state());
    }
    long deadline = System.nanoTime() + patience.toNanos();
    String detail;
    while (true) {
      try {
        Map<String, Long> before = digest(region.primary(), region.id(), servers, control);
        List<Map<String, Long>> backups = new ArrayList<>();
        for (String backup : region.backups()) {
          backups.add(digest(backup, region.id(), servers, control));
        }
        Map<String, Long> after = digest(region.primary(), region.id(), servers, control);
        detail = difference(region, before, backups, after);
        if (detail == null) {
          String compared =
              before.get("scope") == ControlCommand.DIGEST_LEVELS
                  ? String.format(
                      "levels; the primary's L0 (%d entries) is in the backups' log copies",
                      before.getOrDefault("l0Entries", 0L))
                  : "a full scan";
          return new Outcome(
              region,
              true,
              before.get("entries"),
              before.get("levels"),
              "digest " + Long.toHexString(before.get("digest")) + " of " + compared);
        }
      } catch (KvsException e) {
        detail = e.getMessage();
      }
      if (System.nanoTime() > deadline) {
        return new Outcome(region, false, 0, 0, detail);
      }
      // The replicas converge as the backups install what is in flight: ask again.
      Thread.sleep(RETRY_PAUSE_MS);
    }
  }

  /** Why the digests show no agreement, or null if they agree. */
  private static String difference(
      RegionDescriptor region,
      Map<String, Long> before,
      List<Map<String, Long>> backups,
      Map<String, Long> after) {
    if (!compared(before).equals(compared(after))) {
      return "the primary's levels changed while they were compared";
    }
    for (int i = 0; i < backups.size(); i++) {
      Map<String, Long> backup = backups.get(i);
      if (!compared(backup).equals(compared(before))) {
        return String.format(
            "backup %s holds %d entries in %d levels (digest %x), primary %s %d in %d (%x)",
            region.backups().get(i),
            backup.get("entries"),
            backup.get("levels"),
            backup.get("digest"),
            region.primary(),
            before.get("entries"),
            before.get("levels"),
            before.get("digest"));
      }
    }
    return null;
  }

  /** What two replicas must agree on (a primary's L0 is its own). */
  private static Map<String, Long> compared(Map<String, Long> digest) {
    Map<String, Long> kept = new java.util.TreeMap<>(digest);
    kept.remove("l0Entries");
    return kept;
  }

  private static Map<String, Long> digest(
      String server, long regionId, Map<String, ServerInfo> servers, ControlClient control) {
    ServerInfo info = servers.get(server);
    if (info == null) {
      throw KvsException.of(StatusCode.IO_ERROR, "server " + server + " is not live");
    }
    ControlReply reply =
        control.call(info.host(), info.controlPort(), new ControlCommand.Digest(regionId));
    if (!reply.isOk()) {
      throw KvsException.of(reply.status(), server + ": " + reply.message());
    }
    return reply.stats();
  }
}
