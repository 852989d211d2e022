package io.kvs.master;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiPredicate;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;

/**
 * Which primaries to move so that leadership is spread evenly: after a server restarts it rejoins
 * its groups as a backup, so the others lead everything until primaries are handed back. Only
 * handovers to backups in sync are planned (the replicas stay where they are), each from a server
 * that leads at least two more regions than its target, until no such pair is left where the groups
 * allow it: afterwards the servers' counts differ by at most one where the groups allow it, and a
 * cluster within that band plans nothing (no move back and forth). {@code ./kvs admin balance}
 * files the plan as move requests; the master's {@link Balancer} takes a few of its moves at a time
 * by itself.
 */
public final class Balance {
  /** A planned handover of region {@code regionId}'s primary to {@code target}. */
  public record Move(long regionId, String from, String target) {}

  private Balance() {}

  /**
   * The handovers that even out leadership among {@code live} servers that are not {@code excluded}
   * (decommissioned), considering only regions that are open.
   */
  public static List<Move> plan(
      List<RegionDescriptor> regions, Set<String> live, Set<String> excluded) {
    return plan(
        regions,
        live,
        excluded,
        region -> true,
        (region, target) -> true,
        region -> 1.0,
        Integer.MAX_VALUE);
  }

  /**
   * At most {@code limit} of those handovers, moving only regions {@code movable} accepts, each to
   * a backup in sync that {@code canLead} accepts for it, with regions weighing {@code weight}
   * rather than one each: a region moves from a server whose regions weigh at least twice its
   * weight more than its target's. For any weights that stay put, a move never calls for its
   * reverse (afterwards the target weighs less than the source did, the source as much less).
   */
  static List<Move> plan(
      List<RegionDescriptor> regions,
      Set<String> live,
      Set<String> excluded,
      Predicate<RegionDescriptor> movable,
      BiPredicate<RegionDescriptor, String> canLead,
      ToDoubleFunction<RegionDescriptor> weight,
      int limit) {
    Map<String, Double> leads = new TreeMap<>();
    live.stream().filter(server -> !excluded.contains(server)).forEach(s -> leads.put(s, 0.0));
    if (leads.isEmpty()) {
      return List.of();
    }
    regions.forEach(
        region ->
            leads.computeIfPresent(region.primary(), (s, n) -> n + weight.applyAsDouble(region)));
    List<Move> moves = new ArrayList<>();
    Set<Long> moved = new HashSet<>();
    boolean progress = true;
    while (progress && moves.size() < limit) {
      progress = false;
      for (RegionDescriptor region : regions) {
        if (moves.size() >= limit) {
          break;
        }
        if (region.state() != RegionState.OPEN
            || moved.contains(region.id())
            || !movable.test(region)) {
          continue;
        }
        // A server not among those counted (decommissioned, not live) hands over to anyone.
        double from = leads.getOrDefault(region.primary(), Double.MAX_VALUE);
        double moving = weight.applyAsDouble(region);
        String target =
            region.backupsInSync().stream()
                .filter(leads::containsKey)
                .filter(backup -> from - leads.get(backup) >= 2 * moving)
                .filter(backup -> canLead.test(region, backup))
                .min(Comparator.comparing(leads::get))
                .orElse(null);
        if (target == null) {
          continue;
        }
        moves.add(new Move(region.id(), region.primary(), target));
        moved.add(region.id());
        leads.computeIfPresent(region.primary(), (s, n) -> n - moving);
        leads.merge(target, moving, Double::sum);
        progress = true;
      }
    }
    return moves;
  }
}
