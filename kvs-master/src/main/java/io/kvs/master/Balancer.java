package io.kvs.master;

import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.control.HeldRegion;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import java.util.function.ToDoubleFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's own balancing (docs/ARCHITECTURE.md "Balancing by itself"): spreads replicas and
 * leadership over the live servers that are not decommissioned, a few regions at a time, so that a
 * server that joins takes its share and leadership returns after a failover without an operator.
 *
 * <ul>
 *   <li><b>Replicas</b> (send-index only: the other modes cannot catch a new backup up): while the
 *       server with the most replicas holds two more than the one with the fewest, a region it
 *       backs up (and the other does not hold) grows by the emptier server, joining; once that one
 *       is in sync the group has a replica too many and <b>the surplus</b> goes: the backup on the
 *       server holding the most replicas. The surplus rule needs no memory of the move, so a new
 *       master finishes a move the old one began, and it runs even with the balancer off.
 *   <li><b>Leadership</b>: while the regions a server leads weigh at least twice one region's
 *       weight more than those a backup in sync of it leads, that region is handed over to it
 *       ({@link Balance}), as {@code ./kvs admin move} would. A region weighs 1 in an idle cluster;
 *       under load, by the requests a second its primary serves (each primary's {@code list}
 *       reports its counter): an average one 1, an idle one a half, a hot one more, so leadership
 *       follows load -- a server leading a hot region leads fewer others.
 * </ul>
 *
 * Hysteresis and limits, after CockroachDB's experience of oscillating leaseholders: rounds at
 * least {@link BalancerOptions#interval} apart; a round only in a quiet cluster (every region open
 * and whole, every member live and listed, no operator's request pending, no server being drained);
 * at most {@link BalancerOptions#movesInFlight} regions moving at once (a handover under send-index
 * makes every backup catch up anew, a replica move copies the region to its new server); a region
 * it moved rests for {@link BalancerOptions#regionQuiet} from moves of that kind (its leadership
 * may follow a replica move at once); and the bands above (two apart: replicas, or twice the
 * region's weight) leave a cluster within them still. Runs on the master's pass thread only.
 */
final class Balancer {
  private static final Logger LOG = LoggerFactory.getLogger(Balancer.class);

  /** What a pass is asked to do to one region, planned for it at {@code epoch}. */
  private record Planned(long epoch, RegionDescriptor next, String kind, String why) {}

  private final BalancerOptions options;
  private final LongSupplier nanoTime;
  private final MasterMetrics metrics;
  private long lastRound;
  private boolean roundTaken;

  /**
   * When the balancer last moved each region (nanoTime), by kind of move ("replica", "leader"): a
   * region rests from moves of the kind it just had, so that its leadership may follow right after
   * a replica move brought a server into its group.
   */
  private final Map<String, Map<Long, Long>> movedAt = new HashMap<>();

  private Map<Long, Planned> plan = Map.of();

  /**
   * Below this many requests a second per server the cluster is idle enough that leadership is
   * balanced by region counts alone (rates that small are mostly noise).
   */
  static final double LOAD_FLOOR = 50;

  /** Each region's requests a second (smoothed), what leadership weighs. */
  private final RegionLoads loads = new RegionLoads();

  Balancer(BalancerOptions options, MasterMetrics metrics, LongSupplier nanoTime) {
    this.options = options;
    this.metrics = metrics;
    this.nanoTime = nanoTime;
  }

  /** The cluster as a pass sees it before deciding region by region. */
  record View(
      Collection<RegionDescriptor> regions,
      Set<String> live,
      Map<String, Map<Long, HeldRegion>> held,
      Set<String> decommissioned,
      boolean requestsPending,
      boolean switchedOff,
      ClusterConfig config,
      Set<Long> merging) {}

  /** Plans this pass's moves; once per pass, before {@link #next}. */
  void plan(View view) {
    Map<Long, Planned> planned = new HashMap<>();
    trimSurplus(view, planned);
    long now = nanoTime.getAsLong();
    loads.sample(view.regions(), view.held(), now);
    // Bounded by the regions moved lately: a rest that ended is forgotten.
    movedAt
        .values()
        .forEach(
            byRegion ->
                byRegion.values().removeIf(at -> now - at >= options.regionQuiet().toNanos()));
    if (options.enabled()
        && !view.switchedOff()
        && (!roundTaken || now - lastRound >= options.interval().toNanos())
        && quiet(view)) {
      int budget = options.movesInFlight() - moving(view.regions(), view.config());
      if (budget > 0) {
        roundTaken = true;
        lastRound = now;
        budget -= moveReplicas(view, planned, budget, now);
        moveLeadership(view, planned, budget, now);
      }
    }
    plan = planned;
  }

  /**
   * The change planned for {@code region} this pass (at a raised epoch), or null; the region counts
   * as moved from now on.
   */
  RegionDescriptor next(RegionDescriptor region) {
    Planned planned = plan.get(region.id());
    if (planned == null || planned.epoch() != region.epoch()) {
      return null;
    }
    plan.remove(region.id());
    if (!planned.kind().equals("surplus")) { // finishing a move: nothing rests from it
      movedAt
          .computeIfAbsent(planned.kind(), kind -> new HashMap<>())
          .put(region.id(), nanoTime.getAsLong());
    }
    metrics.balanced(planned.kind());
    LOG.info("{}: balancer: {}", planned.next(), planned.why());
    return planned.next();
  }

  /**
   * What leading each region weighs: 1 each in an idle cluster; under load {@code (1 + rate / mean)
   * / 2}, so a region as busy as the average weighs 1, an idle one a half, one ten times as busy
   * 5.5.
   */
  private ToDoubleFunction<RegionDescriptor> weights(View view, int servers) {
    double total = 0;
    for (RegionDescriptor region : view.regions()) {
      total += loads.smoothed(region.id());
    }
    if (view.regions().isEmpty() || total < LOAD_FLOOR * Math.max(1, servers)) {
      return region -> 1.0;
    }
    double mean = total / view.regions().size();
    return region -> (1 + loads.smoothed(region.id()) / mean) / 2;
  }

  /** Regions moving now: a backup joining, or a replica more than the replication factor. */
  static int moving(Collection<RegionDescriptor> regions, ClusterConfig config) {
    int moving = 0;
    for (RegionDescriptor region : regions) {
      if (!region.joining().isEmpty() || region.members().size() > config.replicationFactor()) {
        moving++;
      }
    }
    return moving;
  }

  /** Whether nothing needs repair or an operator's change: balancing waits until then. */
  private static boolean quiet(View view) {
    if (view.requestsPending()) {
      return false;
    }
    for (RegionDescriptor region : view.regions()) {
      if (region.state() != RegionState.OPEN
          || region.members().size() < view.config().replicationFactor()) {
        return false;
      }
      for (String member : region.members()) {
        if (!view.live().contains(member)
            || !view.held().containsKey(member)
            || view.decommissioned().contains(member)) {
          return false;
        }
      }
    }
    return true;
  }

  /** Servers that may take replicas and leadership: live, listed this pass, not decommissioned. */
  private static Set<String> eligible(View view) {
    Set<String> eligible = new HashSet<>();
    for (String server : view.live()) {
      if (view.held().containsKey(server) && !view.decommissioned().contains(server)) {
        eligible.add(server);
      }
    }
    return eligible;
  }

  private static Map<String, Integer> replicaCounts(View view, Set<String> servers) {
    Map<String, Integer> counts = new TreeMap<>();
    servers.forEach(server -> counts.put(server, 0));
    for (RegionDescriptor region : view.regions()) {
      region.members().forEach(member -> counts.computeIfPresent(member, (s, n) -> n + 1));
    }
    return counts;
  }

  /**
   * A group with a replica more than the replication factor, every member in sync, live, listed and
   * none decommissioned (the operator's drain handles those) drops the backup on the server that
   * holds the most replicas.
   */
  private static void trimSurplus(View view, Map<Long, Planned> planned) {
    Map<String, Integer> counts = null;
    for (RegionDescriptor region : view.regions()) {
      if (region.state() != RegionState.OPEN
          || view.merging().contains(region.id()) // its merge's own steps drop the one it chose
          || region.members().size() <= view.config().replicationFactor()
          || !region.joining().isEmpty()
          || !view.live().containsAll(region.members())
          || !view.held().keySet().containsAll(region.members())
          || region.members().stream().anyMatch(view.decommissioned()::contains)) {
        continue;
      }
      if (counts == null) {
        counts = replicaCounts(view, view.live());
      }
      Map<String, Integer> replicas = counts;
      // The most loaded server's backup goes; among equals, the earliest listed (the newest,
      // which a replica move appends, stays).
      String dropped =
          region.backups().stream()
              .max(
                  Comparator.<String>comparingInt(backup -> replicas.getOrDefault(backup, 0))
                      .thenComparing(backup -> -region.backups().indexOf(backup)))
              .orElseThrow();
      List<String> backups = new ArrayList<>(region.backups());
      backups.remove(dropped);
      replicas.merge(dropped, -1, Integer::sum);
      planned.put(
          region.id(),
          new Planned(
              region.epoch(),
              region.reassigned(region.primary(), backups),
              "surplus",
              dropped + " leaves: the group has a replica more than it needs, all in sync"));
    }
  }

  private boolean resting(RegionDescriptor region, String kind, long now) {
    Long moved = movedAt.getOrDefault(kind, Map.of()).get(region.id());
    return moved != null && now - moved < options.regionQuiet().toNanos();
  }

  /** Plans up to {@code budget} replica moves; returns how many. */
  private int moveReplicas(View view, Map<Long, Planned> planned, int budget, long now) {
    if (view.config().mode() != ReplicationMode.SEND_INDEX
        || view.config().replicationFactor() < 2) {
      return 0;
    }
    Set<String> servers = eligible(view);
    Map<String, Integer> counts = replicaCounts(view, servers);
    int moves = 0;
    while (moves < budget && counts.size() > 1) {
      String emptiest =
          counts.entrySet().stream().min(Map.Entry.comparingByValue()).orElseThrow().getKey();
      RegionDescriptor chosen = null;
      String from = null;
      List<String> fullest = new ArrayList<>(counts.keySet());
      fullest.sort(Comparator.comparing(counts::get).reversed());
      for (String server : fullest) {
        if (counts.get(server) - counts.get(emptiest) < 2) {
          break;
        }
        for (RegionDescriptor region : view.regions()) {
          if (!planned.containsKey(region.id())
              && !resting(region, "replica", now)
              && region.backups().contains(server)
              && !region.members().contains(emptiest)
              && region.joining().isEmpty()
              && region.members().size() == view.config().replicationFactor()) {
            chosen = region;
            from = server;
            break;
          }
        }
        if (chosen != null) {
          break;
        }
      }
      if (chosen == null) {
        break;
      }
      List<String> backups = new ArrayList<>(chosen.backups());
      backups.add(emptiest);
      planned.put(
          chosen.id(),
          new Planned(
              chosen.epoch(),
              chosen.reassigned(chosen.primary(), backups, List.of(emptiest)),
              "replica",
              emptiest
                  + " joins to take over from "
                  + from
                  + " ("
                  + counts.get(from)
                  + " replicas against "
                  + counts.get(emptiest)
                  + ")"));
      counts.merge(emptiest, 1, Integer::sum);
      counts.merge(from, -1, Integer::sum);
      moves++;
    }
    return moves;
  }

  private void moveLeadership(View view, Map<Long, Planned> planned, int budget, long now) {
    if (budget <= 0) {
      return;
    }
    Set<String> servers = eligible(view);
    List<RegionDescriptor> regions =
        view.regions().stream().sorted(Comparator.comparingLong(RegionDescriptor::id)).toList();
    boolean sendIndex = view.config().mode() == ReplicationMode.SEND_INDEX;
    List<Balance.Move> moves =
        Balance.plan(
            regions,
            servers,
            Set.of(),
            region -> !planned.containsKey(region.id()) && !resting(region, "leader", now),
            (region, target) -> Reconciler.stillHolds(region, target, view.held()),
            weights(view, servers.size()),
            budget);
    Map<Long, RegionDescriptor> byId = new HashMap<>();
    regions.forEach(region -> byId.put(region.id(), region));
    for (Balance.Move move : moves) {
      RegionDescriptor region = byId.get(move.regionId());
      planned.put(
          region.id(),
          new Planned(
              region.epoch(),
              PlannedChanges.handover(region, move.target(), sendIndex),
              "leader",
              "primary "
                  + move.from()
                  + " -> "
                  + move.target()
                  + " (its leadership weighs over its share)"));
    }
  }
}
