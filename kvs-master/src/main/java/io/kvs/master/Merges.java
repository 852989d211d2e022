package io.kvs.master;

import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.MergeRequest;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlReply;
import io.kvs.core.control.HeldRegion;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongPredicate;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Merges neighbouring regions as operators ask ({@code admin/merges/<lower region>}), and asks by
 * itself for the merges {@link MergeTriggers} chooses, in steps, each taken only once the one
 * before it is done (docs/ARCHITECTURE.md, "Merging regions"):
 *
 * <ol>
 *   <li><b>One group</b>: two regions held by the same servers but led by different ones first get
 *       one group: the smaller is handed over to the other's primary ({@link #align}, written by
 *       the reconciler as an operator's move; the balancer makes no round while a merge is pending,
 *       so it does not hand it back).
 *   <li><b>Retire</b>: once both regions are quiet (open, whole, every member live, listed and
 *       holding them as the map says) and have the same replica group, their primary is told to
 *       stop serving each once every backup holds every write it holds ({@link
 *       ControlCommand.Retire}).
 *   <li><b>Commit</b>, the merge's one change in ZooKeeper: both znodes deleted at the versions
 *       read, the merged region created (the group at the next epoch above both, opening, with its
 *       {@link io.kvs.core.cluster.MergeOrigin}), the id counter moved past it and the request
 *       deleted, in one transaction. Members then make the merged region from their copies of both
 *       as they open it (the reconciler's opens, this same pass).
 * </ol>
 *
 * <p>Before the commit the two regions are the map: a retire that fails, or a master that fails
 * before committing, leaves them not held by their primary, which the reconciler's rules reopen
 * (the request stays and is tried again). After it the merged region is: every member makes it from
 * its own copies when it first opens it, so a crash of any process at any point ends with both
 * regions or the merged one, never a hole or an overlap. Under send-index a backup's copies are
 * replicas, which are not merged in place: the merged region's backups join.
 *
 * <p>Bounded: one retire in flight per region (each bounded by {@link Splits#SEAL_TIMEOUT}); a
 * request for a region that does not exist, has no neighbour above, or whose neighbour is held by
 * other servers is refused, recorded in the request. Pass thread only.
 */
final class Merges {
  private static final Logger LOG = LoggerFactory.getLogger(Merges.class);

  private final RegionStore store;
  private final ServerCommands commands;
  private final MasterMetrics metrics;
  private final Runnable passWanted;
  private final MergeTriggers triggers;

  /**
   * Whether a region's leadership is being handed over ({@link Handovers}): not retired meanwhile.
   */
  private final LongPredicate handingOver;

  /** A retire sent for a region at an epoch, and its reply. */
  private record Retiring(long epoch, CompletableFuture<ControlReply> reply) {}

  private final Map<Long, Retiring> retiring = new HashMap<>();

  /**
   * The handovers this pass plans so that two neighbours to merge, held by the same servers, get
   * one group ({@link #align}): region id to the region handed over. Planned again every pass.
   */
  private final Map<Long, RegionDescriptor> aligning = new HashMap<>();

  Merges(
      RegionStore store,
      ServerCommands commands,
      MasterMetrics metrics,
      Runnable passWanted,
      MergeOptions options,
      SplitOptions splitOptions,
      LongPredicate handingOver) {
    this.handingOver = handingOver;
    this.store = store;
    this.commands = commands;
    this.metrics = metrics;
    this.passWanted = passWanted;
    this.triggers = new MergeTriggers(options, splitOptions, System::nanoTime);
  }

  private boolean lastPending;

  /** Whether a merge was under way or asked for at the last {@link #advance}. */
  boolean pending() {
    return lastPending;
  }

  /** Whether {@code regionId} is being retired: the reconciler leaves it alone meanwhile. */
  boolean retiring(long regionId) {
    return retiring.containsKey(regionId);
  }

  /**
   * Takes every merge request one step further; returns the regions for the rest of this pass:
   * {@code regions} with each pair whose merge committed replaced by the merged region. {@code
   * splits} says which ranges were split for their load lately (never merged back within the hour)
   * and whether a split is under way (no merge is asked for meanwhile).
   */
  Map<Long, RegionStore.Versioned> advance(
      Map<Long, RegionStore.Versioned> regions,
      Map<String, ServerInfo> servers,
      Map<String, Map<Long, HeldRegion>> held,
      ClusterConfig config,
      Splits splits,
      boolean splitPending)
      throws Exception {
    Map<Long, MergeRequest> requests = store.mergeRequests();
    aligning.clear();
    Map<Long, RegionStore.Versioned> result = new TreeMap<>(regions);
    retiring.keySet().removeIf(id -> !regions.containsKey(id) || !pendingFor(id, requests, result));
    for (Map.Entry<Long, MergeRequest> entry : requests.entrySet()) {
      if (!entry.getValue().isRefused()) {
        advance(entry.getKey(), entry.getValue(), result, servers, held, config);
      }
    }
    boolean pending =
        !retiring.isEmpty() || requests.values().stream().anyMatch(r -> !r.isRefused());
    lastPending = pending;
    pending |= splitPending;
    Optional<MergeTriggers.Choice> choice =
        triggers.choose(
            result.values().stream().map(RegionStore.Versioned::region).toList(),
            held,
            pending,
            region ->
                !requests.containsKey(region.id())
                    && Splits.quiet(region, servers, held)
                    && !handingOver.test(region.id())
                    && !splits.sealing(region.id()),
            splits::loadSplitWithinTheHour);
    if (choice.isPresent()) {
      store.requestMerge(choice.get().leftId());
      LOG.info(
          "regions {} and {}: merging them by themselves: {}",
          choice.get().leftId(),
          choice.get().rightId(),
          choice.get().why());
      passWanted.run();
    }
    return result;
  }

  /** Whether {@code id} is one of the two regions of a pending request. */
  private static boolean pendingFor(
      long id, Map<Long, MergeRequest> requests, Map<Long, RegionStore.Versioned> regions) {
    MergeRequest own = requests.get(id);
    if (own != null && !own.isRefused()) {
      return true;
    }
    RegionStore.Versioned region = regions.get(id);
    if (region == null) {
      return false;
    }
    return requests.entrySet().stream()
        .filter(e -> !e.getValue().isRefused())
        .map(e -> regions.get(e.getKey()))
        .anyMatch(
            left ->
                left != null
                    && left.region().end().length > 0
                    && Arrays.equals(left.region().end(), region.region().start()));
  }

  private void advance(
      long leftId,
      MergeRequest request,
      Map<Long, RegionStore.Versioned> result,
      Map<String, ServerInfo> servers,
      Map<String, Map<Long, HeldRegion>> held,
      ClusterConfig config)
      throws Exception {
    RegionStore.Versioned left = result.get(leftId);
    if (left == null) {
      store.refuseMerge(leftId, request.refusedFor("no region " + leftId));
      return;
    }
    RegionStore.Versioned right = neighbourAbove(left.region(), result);
    if (right == null) {
      store.refuseMerge(
          leftId, request.refusedFor("region " + leftId + " is the last: no region follows it"));
      return;
    }
    if (!left.region().sameMembersAs(right.region())) {
      store.refuseMerge(
          leftId,
          request.refusedFor(
              String.format(
                  "regions %d and %d are held by different servers (%s and %s): move a replica"
                      + " first",
                  leftId, right.region().id(), left.region().members(), right.region().members())));
      return;
    }
    if (!left.region().sameGroupAs(right.region())) {
      align(left.region(), right.region(), servers, held, config);
      return;
    }
    List<RegionStore.Versioned> pair = List.of(left, right);
    boolean allSent = true;
    boolean allDone = true;
    for (RegionStore.Versioned versioned : pair) {
      RegionDescriptor region = versioned.region();
      Retiring retire = retiring.get(region.id());
      if (retire != null && retire.epoch() != region.epoch()) {
        retiring.remove(region.id()); // the region moved on: retire again once quiet
        retire = null;
      }
      if (retire == null) {
        allSent = false;
      } else if (!retire.reply().isDone()) {
        allDone = false;
      }
    }
    if (!allSent) {
      // Both at once, or neither: one retired alone would stop serving for nothing.
      if (pair.stream()
          .allMatch(
              v -> Splits.quiet(v.region(), servers, held) && !handingOver.test(v.region().id()))) {
        for (RegionStore.Versioned versioned : pair) {
          if (!retiring.containsKey(versioned.region().id())) {
            retire(versioned.region(), servers);
          }
        }
      }
      return;
    }
    if (!allDone) {
      return;
    }
    boolean retired = true;
    for (RegionStore.Versioned versioned : pair) {
      ControlReply reply =
          retiring.remove(versioned.region().id()).reply().exceptionally(e -> failed(e)).join();
      if (!reply.isOk()) {
        retired = false;
        LOG.warn(
            "{}: its primary did not retire it ({}): {}",
            versioned.region(),
            reply.status(),
            reply.message());
      }
    }
    if (retired) {
      commit(left, right, config, result);
    }
  }

  /**
   * Plans the handover that gives two neighbours held by the same servers one group: the smaller
   * (by what its primary reports; the upper one on a tie) is handed over to the other's primary,
   * once both are quiet and that server is a backup of it in sync. The reconciler writes it as it
   * writes an operator's move (prepared first under send-index); the merge's retire follows once
   * both are quiet again.
   */
  private void align(
      RegionDescriptor left,
      RegionDescriptor right,
      Map<String, ServerInfo> servers,
      Map<String, Map<Long, HeldRegion>> held,
      ClusterConfig config) {
    for (RegionDescriptor region : List.of(left, right)) {
      if (!Splits.quiet(region, servers, held) || handingOver.test(region.id())) {
        return;
      }
    }
    boolean leftMoves = MergeTriggers.bytesOf(left, held) < MergeTriggers.bytesOf(right, held);
    RegionDescriptor moved = leftMoves ? left : right;
    String target = (leftMoves ? right : left).primary();
    if (!moved.backups().contains(target) || moved.joining().contains(target)) {
      return;
    }
    aligning.put(
        moved.id(),
        PlannedChanges.handover(moved, target, config.mode() == ReplicationMode.SEND_INDEX));
    LOG.info(
        "regions {} and {}: {}'s leadership goes to {} for their merge (one group)",
        left.id(),
        right.id(),
        moved.id(),
        target);
  }

  /**
   * The handover planned this pass for {@code region} (as read this pass) that gives it its merge
   * partner's group, or null; written by the reconciler as a planned move.
   */
  RegionDescriptor alignment(RegionDescriptor region) {
    RegionDescriptor next = aligning.get(region.id());
    return next != null && next.epoch() == region.epoch() + 1 ? next : null;
  }

  private void commit(
      RegionStore.Versioned left,
      RegionStore.Versioned right,
      ClusterConfig config,
      Map<Long, RegionStore.Versioned> result)
      throws Exception {
    RegionStore.NextId next = store.nextRegionId(result.keySet());
    RegionDescriptor merged =
        left.region().merge(right.region(), next.id(), config.mode() == ReplicationMode.SEND_INDEX);
    try {
      store.commitMerge(left, right, merged, next);
    } catch (KeeperException e) {
      // A region, the counter or the request changed meanwhile: the regions are reopened by the
      // reconciler's rules, the request tried again.
      LOG.warn(
          "regions {} and {}: merge not committed ({}); next pass",
          left.region().id(),
          right.region().id(),
          e.code());
      return;
    }
    result.remove(left.region().id());
    result.remove(right.region().id());
    result.put(merged.id(), new RegionStore.Versioned(merged, 0));
    metrics.merge();
    LOG.info("merged regions {} and {} into {}", left.region(), right.region(), merged);
  }

  private void retire(RegionDescriptor region, Map<String, ServerInfo> servers) {
    CompletableFuture<ControlReply> reply =
        commands.send(
            servers.get(region.primary()),
            new ControlCommand.Retire(region.id(), region.epoch()),
            Splits.SEAL_TIMEOUT);
    retiring.put(region.id(), new Retiring(region.epoch(), reply));
    reply.whenComplete((r, e) -> passWanted.run());
    LOG.info("{}: retiring it for its merge", region);
  }

  /** The region whose range starts where {@code region}'s ends (null: none). */
  static RegionStore.Versioned neighbourAbove(
      RegionDescriptor region, Map<Long, RegionStore.Versioned> regions) {
    if (region.end().length == 0) {
      return null;
    }
    for (RegionStore.Versioned other : regions.values()) {
      if (Arrays.equals(other.region().start(), region.end())) {
        return other;
      }
    }
    return null;
  }

  private static ControlReply failed(Throwable failure) {
    Throwable cause = failure.getCause() != null ? failure.getCause() : failure;
    return ControlReply.failed(StatusCode.IO_ERROR, String.valueOf(cause.getMessage()));
  }
}
