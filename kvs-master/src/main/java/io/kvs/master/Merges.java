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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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
 *   <li><b>One group</b>: two regions of different groups first get one: the smaller takes the
 *       other's group a planned change at a time ({@link #align}: a server joins it, one leaves it,
 *       its leadership is handed over; written by the reconciler as an operator's move would be).
 *       The balancer makes no round while a merge is pending and leaves its regions' replicas
 *       alone.
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
 * request for a region that does not exist, has no neighbour above, or (under build-index, which
 * cannot catch a new backup up) whose neighbour is held by other servers is refused, recorded in
 * the request. Pass thread only.
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
   * The changes this pass plans so that two neighbours to merge get one group ({@link #align}):
   * region id to the region as changed. Planned again every pass.
   */
  private final Map<Long, RegionDescriptor> aligning = new HashMap<>();

  /**
   * Which of a request's two regions takes the other's group (by the request's lower region id),
   * chosen once so that the steps of one alignment all move the same region.
   */
  private final Map<Long, Long> movers = new HashMap<>();

  /** The regions of the merges asked for and not refused, as of the last {@link #advance}. */
  private Set<Long> merging = Set.of();

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

  /**
   * The regions of the merges asked for and not refused, as of the last {@link #advance}: the
   * balancer's surplus rule leaves them to the merge's own steps.
   */
  Set<Long> merging() {
    return merging;
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
    merging = involvedIn(requests, result);
    retiring.keySet().retainAll(merging);
    movers.keySet().retainAll(requests.keySet());
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
            splits::loadSplitWithinTheHour,
            config.mode() == ReplicationMode.SEND_INDEX);
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

  /** The regions of the requests not refused: each request's region and its neighbour above. */
  private static Set<Long> involvedIn(
      Map<Long, MergeRequest> requests, Map<Long, RegionStore.Versioned> regions) {
    Set<Long> involved = new HashSet<>();
    requests.forEach(
        (leftId, request) -> {
          RegionStore.Versioned left = regions.get(leftId);
          if (!request.isRefused() && left != null) {
            involved.add(leftId);
            RegionStore.Versioned right = neighbourAbove(left.region(), regions);
            if (right != null) {
              involved.add(right.region().id());
            }
          }
        });
    return involved;
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
    if (!left.region().sameGroupAs(right.region())) {
      if (!align(leftId, left.region(), right.region(), servers, held, config)) {
        store.refuseMerge(
            leftId,
            request.refusedFor(
                String.format(
                    "regions %d and %d are held by different servers (%s and %s), and under %s"
                        + " a replica cannot be moved: move a primary so that they share one group",
                    leftId,
                    right.region().id(),
                    left.region().members(),
                    right.region().members(),
                    config.mode().configName())));
      }
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
   * Plans this pass's step towards one group for two neighbours to merge. The one that moves is
   * chosen once per request (the smaller, by what its primary reports; the upper on a tie) and
   * takes the other's group step by step, each a planned change of one region:
   *
   * <ul>
   *   <li>it has a replica more than the other's group: one of its servers the other lacks leaves
   *       (a backup; its primary is first handed over to a backup in the other's group);
   *   <li>else it lacks one of the other's servers: that server joins it as a backup (send-index
   *       only: the other modes cannot catch a new backup up) and the next step drops a surplus;
   *   <li>else only the leader differs: it is handed over to the other's primary.
   * </ul>
   *
   * Only while both are quiet; the balancer's surplus rule leaves regions being merged alone.
   * Whether the pair can be given one group at all ({@code false}: refuse the request).
   */
  private boolean align(
      long leftId,
      RegionDescriptor left,
      RegionDescriptor right,
      Map<String, ServerInfo> servers,
      Map<String, Map<Long, HeldRegion>> held,
      ClusterConfig config) {
    boolean sendIndex = config.mode() == ReplicationMode.SEND_INDEX;
    if (!sendIndex && !left.sameMembersAs(right)) {
      return false;
    }
    for (RegionDescriptor region : List.of(left, right)) {
      if (!Splits.quiet(region, servers, held) || handingOver.test(region.id())) {
        return true;
      }
    }
    long movedId =
        movers.computeIfAbsent(
            leftId,
            id ->
                MergeTriggers.bytesOf(left, held) < MergeTriggers.bytesOf(right, held)
                    ? left.id()
                    : right.id());
    RegionDescriptor moved = movedId == left.id() ? left : right;
    RegionDescriptor kept = movedId == left.id() ? right : left;
    List<String> lacking =
        kept.members().stream().filter(server -> !moved.members().contains(server)).toList();
    List<String> extra =
        moved.members().stream().filter(server -> !kept.members().contains(server)).toList();
    RegionDescriptor next;
    String step;
    if (moved.members().size() > kept.members().size() && !extra.isEmpty()) {
      String leaving =
          extra.stream().filter(moved.backups()::contains).findFirst().orElse(moved.primary());
      if (leaving.equals(moved.primary())) {
        String target =
            moved.backups().contains(kept.primary())
                ? kept.primary()
                : moved.backups().stream().filter(kept.members()::contains).findFirst().orElse("");
        if (target.isEmpty()) {
          return true;
        }
        next = PlannedChanges.handover(moved, target, sendIndex);
        step = "its leadership goes to " + target + " (its primary " + leaving + " leaves next)";
      } else {
        List<String> backups = new ArrayList<>(moved.backups());
        backups.remove(leaving);
        next = moved.reassigned(moved.primary(), backups);
        step = leaving + " leaves it";
      }
    } else if (!lacking.isEmpty()) {
      String joining = lacking.contains(kept.primary()) ? kept.primary() : lacking.get(0);
      List<String> backups = new ArrayList<>(moved.backups());
      backups.add(joining);
      next = moved.reassigned(moved.primary(), backups, List.of(joining));
      step = joining + " joins it as a backup";
    } else if (!moved.primary().equals(kept.primary())) {
      next = PlannedChanges.handover(moved, kept.primary(), sendIndex);
      step = "its leadership goes to " + kept.primary();
    } else {
      return true; // one group already (the caller merges it)
    }
    aligning.put(moved.id(), next);
    LOG.info(
        "regions {} and {}: {} takes {}'s group {} for their merge: {}",
        left.id(),
        right.id(),
        moved.id(),
        kept.id(),
        kept.members(),
        step);
    return true;
  }

  /**
   * The change planned this pass for {@code region} (as read this pass) towards its merge partner's
   * group, or null; written by the reconciler as a planned move.
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
