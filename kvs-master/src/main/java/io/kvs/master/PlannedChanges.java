package io.kvs.master;

import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.MoveRequest;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.control.HeldRegion;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operators' planned changes ({@code ./kvs admin move} and {@code decommission}), one step per
 * region per pass, built on the steps of failure recovery (docs/ARCHITECTURE.md "Planned moves"):
 *
 * <ul>
 *   <li><b>A handover</b> moves the primary to a backup in sync: the new group lists the old
 *       primary as its first backup, so the master's opens (backups first, in order) demote it
 *       before anything else, and it hands its last records to the backups, which are still at the
 *       old epoch, before the new primary is opened at the new one. Nothing acknowledged is lost:
 *       every backup in sync holds every acknowledged write. Clients see NOT_PRIMARY or an epoch
 *       change and retry.
 *   <li><b>Draining a backup</b> of a decommissioned server: under send-index a replacement (the
 *       least loaded live server outside the group, never a decommissioned one) joins first; once
 *       it is in sync the drained server leaves the group (the master then closes its copy). With
 *       no replacement, or under modes that cannot catch a new backup up, it leaves at once and the
 *       region stays under-replicated until a server joins.
 * </ul>
 *
 * A step is taken only for a region that is open with every member live and listed, after every
 * repair of failure recovery: planned work never races a recovery.
 */
final class PlannedChanges {
  private static final Logger LOG = LoggerFactory.getLogger(PlannedChanges.class);

  private final RegionStore store;
  private Map<Long, MoveRequest> moves = Map.of();
  private Set<String> decommissioned = Set.of();

  /** Regions already warned about being impossible to drain (logged once each). */
  private final Set<Long> undrainable = new HashSet<>();

  PlannedChanges(RegionStore store) {
    this.store = store;
  }

  /** Reads the operators' requests; once per pass. */
  void refresh() throws Exception {
    moves = store.moves();
    decommissioned = store.decommissioned();
  }

  /** The servers being decommissioned. */
  Set<String> decommissioned() {
    return decommissioned;
  }

  /** Whether a move request waits to be carried out (refused ones do not count). */
  boolean movesPending() {
    return moves.values().stream().anyMatch(move -> !move.isRefused());
  }

  /** Whether {@code server} is being decommissioned (no replica is placed there). */
  boolean isDecommissioned(String server) {
    return decommissioned.contains(server);
  }

  /**
   * The next step for {@code region} (at a raised epoch), or null if none is due now. Refuses and
   * retires move requests as a side effect.
   */
  RegionDescriptor next(
      RegionDescriptor region,
      Set<String> live,
      Map<String, Map<Long, HeldRegion>> held,
      Map<String, Integer> replicas,
      ClusterConfig config)
      throws Exception {
    if (region.state() != RegionState.OPEN
        || !live.containsAll(region.members())
        || !held.keySet().containsAll(region.members())) {
      return null;
    }
    MoveRequest move = moves.get(region.id());
    if (move != null && !move.isRefused()) {
      RegionDescriptor moved = move(region, move, live, held, config);
      if (moved != null || moves.containsKey(region.id())) {
        return moved;
      }
    }
    for (String member : region.members()) {
      if (decommissioned.contains(member)) {
        return drain(region, member, live, held, replicas, config);
      }
    }
    return null;
  }

  /**
   * Retires the move request {@code region} (just written to the map) carries out: the map is the
   * record of the handover from now on, and the opens that follow are failure recovery's.
   */
  void applied(RegionDescriptor region) throws Exception {
    MoveRequest move = moves.get(region.id());
    if (move != null && !move.isRefused() && move.to().equals(region.primary())) {
      store.finishMove(region.id());
      moves.remove(region.id());
    }
  }

  private RegionDescriptor move(
      RegionDescriptor region,
      MoveRequest move,
      Set<String> live,
      Map<String, Map<Long, HeldRegion>> held,
      ClusterConfig config)
      throws Exception {
    String target = move.to();
    String refusal = null;
    if (region.primary().equals(target)) {
      store.finishMove(region.id());
      moves.remove(region.id());
      LOG.info("region {}: primary is {} as requested; move done", region.id(), target);
      return null;
    } else if (!region.backups().contains(target)) {
      refusal = target + " is no member of region " + region.id() + " " + region.members();
    } else if (!live.contains(target)) {
      refusal = target + " is not a live server";
    } else if (decommissioned.contains(target)) {
      refusal = target + " is being decommissioned";
    }
    if (refusal != null) {
      store.refuseMove(region.id(), move.refusedFor(refusal));
      moves.put(region.id(), move.refusedFor(refusal));
      LOG.warn("refused to move the primary of region {}: {}", region.id(), refusal);
      return null;
    }
    if (region.joining().contains(target) || !Reconciler.stillHolds(region, target, held)) {
      return null; // it catches up first; the request waits (bounded by the catch-up timeout)
    }
    return handover(region, target, config.mode() == ReplicationMode.SEND_INDEX);
  }

  private RegionDescriptor drain(
      RegionDescriptor region,
      String drained,
      Set<String> live,
      Map<String, Map<Long, HeldRegion>> held,
      Map<String, Integer> replicas,
      ClusterConfig config) {
    boolean sendIndex = config.mode() == ReplicationMode.SEND_INDEX;
    if (region.primary().equals(drained)) {
      String target =
          region.backupsInSync().stream()
              .filter(backup -> !decommissioned.contains(backup))
              .filter(backup -> Reconciler.stillHolds(region, backup, held))
              .findFirst()
              .orElse(null);
      if (target == null) {
        if (region.joining().isEmpty() && undrainable.add(region.id())) {
          LOG.warn(
              "region {}: decommissioned {} is its primary and no other member holds every write;"
                  + " it stays until one does",
              region.id(),
              drained);
        }
        return null;
      }
      return handover(region, target, sendIndex);
    }
    List<String> without = new ArrayList<>(region.backups());
    without.remove(drained);
    boolean inSync = !region.joining().contains(drained);
    if (inSync && region.members().size() > config.replicationFactor()) {
      if (!region.joining().isEmpty()) {
        return null; // its replacement is catching up
      }
      LOG.info("region {}: {} leaves the group, its replacement is in sync", region.id(), drained);
      return region.reassigned(region.primary(), without);
    }
    String replacement =
        inSync && sendIndex
            ? Reconciler.leastLoaded(
                live, region.members(), held, replicas, decommissioned::contains)
            : null;
    if (replacement == null) {
      LOG.warn(
          "region {}: {} leaves the group{}",
          region.id(),
          drained,
          inSync ? " with no replacement; the region is under-replicated" : " (not in sync)");
      return region.reassigned(region.primary(), without);
    }
    List<String> grown = new ArrayList<>(region.backups());
    grown.add(replacement);
    List<String> joining = new ArrayList<>(region.joining());
    joining.add(replacement);
    replicas.merge(replacement, 1, Integer::sum);
    LOG.info("region {}: {} joins to replace decommissioned {}", region.id(), replacement, drained);
    return region.reassigned(region.primary(), grown, joining);
  }

  /**
   * {@code region} with {@code target} (a backup in sync) as its primary and the old primary as its
   * first backup, at a raised epoch. Under send-index every backup joins anew under the new
   * primary, as after a failover.
   */
  static RegionDescriptor handover(RegionDescriptor region, String target, boolean sendIndex) {
    List<String> backups = new ArrayList<>();
    backups.add(region.primary());
    region.backups().stream().filter(backup -> !backup.equals(target)).forEach(backups::add);
    LOG.info(
        "region {}: handing the primary over from {} to {}", region.id(), region.primary(), target);
    return region.reassigned(target, backups, sendIndex ? backups : List.of());
  }
}
