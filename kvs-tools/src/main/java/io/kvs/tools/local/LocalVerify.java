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
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;

/**
 * Checks that every region's backups hold what its primary serves: asks each member for a digest of
 * the region ({@link ControlCommand.Digest}) and compares them. The primary's digest is of what it
 * serves (its in-memory and device levels); a send-index backup's, of what it would serve if it
 * were promoted now (its installed levels with the records of its log copies past them, replayed as
 * recovery would); a build-index backup's, of what its own region serves with the records its
 * stream holds beyond it (applied at its next flush, or when it closes). Under send-index the
 * replicas must also agree on the pairs their device levels hold and on the last sequence number
 * served; the counts say how much each comparison covered (pairs in the device levels, entries or
 * records past them), so a test can tell a comparison of empty levels from a real one.
 *
 * <p>A compaction or a write between the primary's digest and a backup's makes them differ without
 * anything being wrong, so a region passes when the primary's digest is the same before and after
 * its backups' and theirs agree with it, and is retried until {@code patience} runs out otherwise.
 */
final class LocalVerify {
  private static final Duration CONTROL_TIMEOUT = Duration.ofSeconds(60);
  private static final long RETRY_PAUSE_MS = 200;

  /** What every replica must agree on. */
  private static final List<String> SERVED = List.of("digest", "pairs");

  /** What a send-index backup must also agree on with its primary (it holds the same levels). */
  private static final List<String> SHIPPED = List.of("levelPairs", "levels", "lastLsn");

  private final ClusterDirectory directory;
  private final Duration patience;

  LocalVerify(ClusterDirectory directory, Duration patience) {
    this.directory = directory;
    this.patience = patience;
  }

  /** The detail of a region split or merged while it was compared. */
  private static final String GONE = "split or merged while compared";

  /**
   * One region's outcome: {@code digests} holds each member's digest counters, the primary's first
   * (then its backups in the region's order), or is empty when the replicas did not agree.
   */
  record Outcome(
      RegionDescriptor region, boolean same, List<Map<String, Long>> digests, String detail) {
    /** Live pairs the primary serves. */
    long pairs() {
      return digests.isEmpty() ? 0 : digests.get(0).get("pairs");
    }

    /** Each member's {@code counter}, the primary's first, joined by "/". */
    String each(String counter) {
      return digests.stream()
          .map(digest -> Long.toString(digest.get(counter)))
          .collect(Collectors.joining("/"));
    }
  }

  /** Prints a line per region and a summary; 0 if every region's replicas agree, 1 otherwise. */
  int run() throws Exception {
    Map<String, String> state = directory.load();
    if (state.getOrDefault("zookeeper", "").isEmpty()) {
      System.out.println("no local cluster in " + directory.root() + " (./kvs local start)");
      return 1;
    }
    List<Outcome> outcomes = verify(state.get("zookeeper"), state.get("cluster"));
    System.out.printf(
        "%-4s %-8s %-10s %-7s %9s %-20s %-20s  %s%n",
        "id", "primary", "backups", "result", "pairs", "in-levels", "past-levels", "detail");
    int same = 0;
    for (Outcome outcome : outcomes) {
      System.out.printf(
          "%-4d %-8s %-10s %-7s %9d %-20s %-20s  %s%n",
          outcome.region().id(),
          outcome.region().primary(),
          String.join(",", outcome.region().backups()),
          outcome.same() ? "same" : "DIFFER",
          outcome.pairs(),
          outcome.same() ? outcome.each("levelPairs") : "-",
          outcome.same() ? outcome.each("pastLevels") : "-",
          outcome.detail());
      same += outcome.same() ? 1 : 0;
    }
    System.out.printf(
        "%n%d of %d regions: backups hold what their primary holds%n", same, outcomes.size());
    System.out.println(
        "(in-levels: live pairs in each member's device levels, the primary's first; past-levels:"
            + " the primary's in-memory entries, then each backup's log records past its levels,"
            + " or under build-index its own in-memory entries and records not applied yet)");
    return same == outcomes.size() && !outcomes.isEmpty() ? 0 : 1;
  }

  /**
   * Compares the replicas of every region of cluster {@code cluster}. A region split (or merged)
   * while it is compared is gone: the whole map is compared again, within the patience.
   */
  List<Outcome> verify(String zookeeper, String cluster) throws Exception {
    long deadline = System.nanoTime() + patience.toNanos();
    try (CuratorFramework curator = LocalStatus.connect(zookeeper);
        ControlClient control = new ControlClient(CONTROL_TIMEOUT, directory.toolSecurity())) {
      ClusterPaths paths = new ClusterPaths(cluster);
      while (true) {
        List<Outcome> outcomes = new ArrayList<>();
        boolean changed = false;
        RegionMap map = LocalStatus.regions(curator, paths);
        for (RegionDescriptor region : map.regions()) {
          Outcome outcome = verify(region, curator, paths, control);
          outcomes.add(outcome);
          changed |= outcome.detail().equals(GONE);
        }
        if (!changed || System.nanoTime() > deadline) {
          return outcomes;
        }
      }
    }
  }

  /**
   * Compares region {@code regionId}'s replicas, reading its group (and the live servers) again at
   * every try: a region being opened (a catch-up, a reopening) is waited for within the patience.
   */
  private Outcome verify(
      RegionDescriptor listed, CuratorFramework curator, ClusterPaths paths, ControlClient control)
      throws Exception {
    long deadline = System.nanoTime() + patience.toNanos();
    String detail;
    while (true) {
      Optional<RegionDescriptor> now = LocalStatus.regions(curator, paths).byId(listed.id());
      if (now.isEmpty()) {
        return new Outcome(listed, false, List.of(), GONE);
      }
      RegionDescriptor region = now.get();
      Map<String, ServerInfo> servers = LocalStatus.servers(curator, paths);
      try {
        if (region.state() != RegionState.OPEN) {
          throw KvsException.of(StatusCode.BUSY, "region is " + region.state());
        }
        Map<String, Long> before = digest(region.primary(), region.id(), servers, control);
        List<Map<String, Long>> backups = new ArrayList<>();
        for (String backup : region.backups()) {
          backups.add(digest(backup, region.id(), servers, control));
        }
        Map<String, Long> after = digest(region.primary(), region.id(), servers, control);
        detail = difference(region, before, backups, after);
        if (detail == null) {
          List<Map<String, Long>> digests = new ArrayList<>(List.of(before));
          digests.addAll(backups);
          boolean wouldServe =
              backups.stream().anyMatch(b -> b.get("scope") != ControlCommand.DIGEST_SERVED);
          return new Outcome(
              region,
              true,
              digests,
              String.format(
                  "digest %x of %s",
                  before.get("digest"),
                  wouldServe
                      ? "what each backup would serve if promoted"
                      : "what each replica serves"));
        }
      } catch (KvsException e) {
        detail = e.getMessage();
      }
      if (System.nanoTime() > deadline) {
        return new Outcome(region, false, List.of(), detail);
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
    if (!before.equals(after)) {
      return "what the primary serves changed while the replicas were compared";
    }
    for (int i = 0; i < backups.size(); i++) {
      Map<String, Long> backup = backups.get(i);
      List<String> compared = new ArrayList<>(SERVED);
      if (backup.get("scope") == ControlCommand.DIGEST_SEND_INDEX_BACKUP) {
        compared.addAll(SHIPPED);
      }
      for (String counter : compared) {
        if (!backup.get(counter).equals(before.get(counter))) {
          return String.format(
              "backup %s %s %s (%s), primary %s %s",
              region.backups().get(i),
              backup.get("scope") == ControlCommand.DIGEST_SERVED
                  ? "serves"
                  : "would serve, if promoted,",
              describe(backup),
              counter + " differs",
              region.primary(),
              describe(before));
        }
      }
    }
    return null;
  }

  private static String describe(Map<String, Long> digest) {
    return String.format(
        "%d pairs (%d in %d levels, %d past them, %d dropped) to LSN %d, digest %x",
        digest.get("pairs"),
        digest.get("levelPairs"),
        digest.get("levels"),
        digest.get("pastLevels"),
        digest.get("dropped"),
        digest.get("lastLsn"),
        digest.get("digest"));
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
