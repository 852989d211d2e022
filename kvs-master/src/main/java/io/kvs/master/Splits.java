package io.kvs.master;

import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.cluster.SplitRequest;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlReply;
import io.kvs.core.control.HeldRegion;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongPredicate;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Splits regions as operators ask ({@code admin/splits/<region>}), and asks by itself for the
 * splits {@link SplitTriggers} chooses (size, load; {@link SplitOptions}), two steps per split,
 * each taken only once the one before it is done (docs/ARCHITECTURE.md, "Splitting a region"):
 *
 * <ol>
 *   <li><b>Seal</b>: once the region is quiet (open, its whole group in sync, every member live,
 *       listed and holding it as the map says), its primary is told to stop serving it once every
 *       backup holds every write its region holds ({@link ControlCommand.Seal}); it answers with
 *       the split key (the one asked for, or the middle of the region by size).
 *   <li><b>Commit</b> ({@link #commitSealed}, first thing in the pass after the seal's answer), the
 *       split's one change in ZooKeeper: the parent's znode deleted at the version read, both
 *       daughters created (the parent's group at the next epoch, opening, with their {@link
 *       io.kvs.core.cluster.SplitOrigin}), the id counter moved past them and the request deleted,
 *       in one transaction. Members then split their copies of the parent as they open the
 *       daughters (the reconciler's opens, this same pass).
 * </ol>
 *
 * <p>Before the commit the parent is the region: a seal that fails, or a master that fails before
 * committing, leaves it not held by its primary, which the reconciler's rules reopen (the request
 * stays and is tried again). After it the daughters are: every member splits its copy of the parent
 * when it first opens one, from its own disk, so a crash of any process at any point ends with the
 * parent or both daughters, never a hole or an overlap. Under send-index a backup's copy is a
 * replica, which is not split in place: the daughters' backups join (catch-up from the primary).
 *
 * <p>Bounded: one seal in flight per region (each bounded by {@link #SEAL_TIMEOUT}); a request for
 * a region that does not exist or a key outside it is refused, recorded in the request. Pass thread
 * only.
 */
final class Splits {
  private static final Logger LOG = LoggerFactory.getLogger(Splits.class);

  /** How long a primary may take to seal (it waits for its backups, bounded by its timeout). */
  static final Duration SEAL_TIMEOUT = Duration.ofSeconds(30);

  private final RegionStore store;
  private final ServerCommands commands;
  private final MasterMetrics metrics;
  private final Runnable passWanted;
  private final SplitTriggers triggers;

  /**
   * Whether a region's leadership is being handed over ({@link Handovers}): not sealed meanwhile.
   */
  private final LongPredicate handingOver;

  /**
   * A seal sent for a region at an epoch, for {@code request} (as read when it was sent: the commit
   * reads it no more, its transaction deletes it and fails if it is gone), and its reply.
   */
  private record Sealing(
      long epoch,
      SplitRequest request,
      CompletableFuture<ControlReply> reply,
      AtomicLong answeredAt) {}

  private final Map<Long, Sealing> sealing = new HashMap<>();

  Splits(
      RegionStore store,
      ServerCommands commands,
      MasterMetrics metrics,
      Runnable passWanted,
      SplitOptions options,
      LongPredicate handingOver) {
    this.store = store;
    this.commands = commands;
    this.metrics = metrics;
    this.passWanted = passWanted;
    this.handingOver = handingOver;
    this.triggers = new SplitTriggers(options, System::nanoTime);
  }

  /**
   * How long a load split keeps merges off its range (issue 28: no load split in the last hour).
   */
  static final long LOAD_SPLIT_MEMORY_NANOS = java.util.concurrent.TimeUnit.HOURS.toNanos(1);

  /** Regions split for their load by this master, when (nanoTime); kept for an hour, bounded. */
  private final Map<RegionDescriptor, Long> loadSplits = new HashMap<>();

  /** Whether a range overlapping {@code [start, end)} was split for its load in the last hour. */
  boolean loadSplitWithinTheHour(byte[] start, byte[] end) {
    long now = System.nanoTime();
    loadSplits.values().removeIf(at -> now - at > LOAD_SPLIT_MEMORY_NANOS);
    for (RegionDescriptor split : loadSplits.keySet()) {
      boolean before = end.length > 0 && Keys.compare(end, split.start()) <= 0;
      boolean after = split.end().length > 0 && Keys.compare(split.end(), start) <= 0;
      if (!before && !after) {
        return true;
      }
    }
    return false;
  }

  private boolean lastPending;

  /** Whether a split was under way or asked for at the last {@link #advance}. */
  boolean pending() {
    return lastPending;
  }

  /** Whether a seal was answered OK since the last commit ({@link #commitSealed} has work). */
  boolean anySealed() {
    return sealing.values().stream().anyMatch(seal -> sealedOk(seal.reply()));
  }

  /** Whether {@code regionId} is being sealed: the reconciler leaves it alone meanwhile. */
  boolean sealing(long regionId) {
    return sealing.containsKey(regionId);
  }

  /**
   * Takes every split request one step further; returns the regions for the rest of this pass:
   * {@code regions} with each parent whose split committed replaced by its daughters.
   */
  Map<Long, RegionStore.Versioned> advance(
      Map<Long, RegionStore.Versioned> regions,
      Map<String, ServerInfo> servers,
      Map<String, Map<Long, HeldRegion>> held,
      ClusterConfig config,
      boolean mergePending)
      throws Exception {
    Map<Long, SplitRequest> requests = store.splitRequests();
    sealing.keySet().removeIf(id -> !requests.containsKey(id) || !regions.containsKey(id));
    Map<Long, RegionStore.Versioned> result = new TreeMap<>(regions);
    for (Map.Entry<Long, SplitRequest> entry : requests.entrySet()) {
      long id = entry.getKey();
      SplitRequest request = entry.getValue();
      if (request.isRefused()) {
        continue;
      }
      RegionStore.Versioned versioned = regions.get(id);
      if (versioned == null) {
        store.refuseSplit(id, request.refusedFor("no region " + id));
        continue;
      }
      RegionDescriptor region = versioned.region();
      if (request.key().length > 0 && !region.splitsAt(request.key())) {
        store.refuseSplit(
            id,
            request.refusedFor(
                "key " + Keys.print(request.key()) + " is not inside " + region.rangeText()));
        continue;
      }
      Sealing seal = sealing.get(id);
      if (seal != null && seal.epoch() != region.epoch()) {
        sealing.remove(id); // the region moved on: seal again once quiet
        seal = null;
      }
      if (seal == null) {
        if (quiet(region, servers, held) && !handingOver.test(id)) {
          seal(region, request, servers);
        }
        continue;
      }
      if (seal.reply().isDone()) {
        sealed(versioned, request, config, result);
      }
    }
    // Its own requests, by size or load: one at a time, as an operator's.
    boolean pending =
        !sealing.isEmpty() || requests.values().stream().anyMatch(r -> !r.isRefused());
    lastPending = pending;
    pending |= mergePending; // none of its own while a merge is under way
    var choice =
        triggers.choose(
            result.values().stream().map(RegionStore.Versioned::region).toList(),
            held,
            pending,
            region ->
                !requests.containsKey(region.id())
                    && quiet(region, servers, held)
                    && !handingOver.test(region.id()));
    if (choice.isPresent()) {
      if (choice.get().byLoad()) {
        RegionStore.Versioned hot = result.get(choice.get().regionId());
        if (hot != null) {
          loadSplits.put(hot.region(), System.nanoTime());
        }
      }
      store.requestSplit(
          choice.get().regionId(),
          choice.get().byLoad() ? SplitRequest.forLoad() : SplitRequest.at(new byte[0]));
      LOG.info(
          "region {}: splitting it by itself: {}", choice.get().regionId(), choice.get().why());
      passWanted.run();
    }
    return result;
  }

  /**
   * Commits every split whose primary sealed the region since the last pass, first thing in a pass
   * (before it lists the servers: the region is unavailable from its seal to its daughters' opens,
   * which follow the commit in this pass); returns {@code regions} with each parent whose split
   * committed replaced by its daughters. A refused seal is handled by {@link #advance}.
   */
  Map<Long, RegionStore.Versioned> commitSealed(
      Map<Long, RegionStore.Versioned> regions, ClusterConfig config) throws Exception {
    Map<Long, RegionStore.Versioned> result = new TreeMap<>(regions);
    if (!anySealed()) {
      return result;
    }
    // The requests are not read again (two ZooKeeper round trips inside the region's unavailable
    // window): each sealing holds the one it was sent for.
    for (Map.Entry<Long, Sealing> entry : List.copyOf(sealing.entrySet())) {
      RegionStore.Versioned versioned = regions.get(entry.getKey());
      SplitRequest request = entry.getValue().request();
      if (versioned != null
          && versioned.region().epoch() == entry.getValue().epoch()
          && sealedOk(entry.getValue().reply())) {
        sealed(versioned, request, config, result);
      }
    }
    return result;
  }

  private static boolean sealedOk(CompletableFuture<ControlReply> reply) {
    return reply.isDone() && !reply.isCompletedExceptionally() && reply.join().isOk();
  }

  /** Takes a split whose seal was answered further: the commit, or the refusal recorded. */
  private void sealed(
      RegionStore.Versioned versioned,
      SplitRequest request,
      ClusterConfig config,
      Map<Long, RegionStore.Versioned> result)
      throws Exception {
    RegionDescriptor region = versioned.region();
    long id = region.id();
    Sealing seal = sealing.remove(id);
    ControlReply reply = seal.reply().exceptionally(e -> failed(e)).join();
    if (!reply.isOk()) {
      if (reply.status() == StatusCode.INVALID_ARGUMENT) {
        store.refuseSplit(id, request.refusedFor(reply.message()));
      }
      LOG.warn("{}: its primary did not seal it ({}): {}", region, reply.status(), reply.message());
      return;
    }
    commit(
        versioned, Base64.getDecoder().decode(reply.message()), config, result, seal.answeredAt());
  }

  private void seal(
      RegionDescriptor region, SplitRequest request, Map<String, ServerInfo> servers) {
    CompletableFuture<ControlReply> reply =
        commands.send(
            servers.get(region.primary()),
            new ControlCommand.Seal(region.id(), region.epoch(), request.key(), request.byLoad()),
            SEAL_TIMEOUT);
    AtomicLong answeredAt = new AtomicLong();
    sealing.put(region.id(), new Sealing(region.epoch(), request, reply, answeredAt));
    reply.whenComplete(
        (r, e) -> {
          answeredAt.set(System.nanoTime());
          passWanted.run();
        });
    LOG.info("{}: sealing it for its split", region);
  }

  private void commit(
      RegionStore.Versioned parent,
      byte[] key,
      ClusterConfig config,
      Map<Long, RegionStore.Versioned> result,
      AtomicLong answeredAt)
      throws Exception {
    RegionDescriptor region = parent.region();
    long committing = System.nanoTime();
    if (!region.splitsAt(key)) {
      LOG.warn("{}: its primary sealed it at {}, outside it", region, Keys.print(key));
      return;
    }
    RegionStore.NextId next = store.nextRegionId(result.keySet());
    List<RegionDescriptor> daughters =
        region.split(key, next.id(), config.mode() == ReplicationMode.SEND_INDEX);
    try {
      store.commitSplit(parent, daughters, next, true);
    } catch (KeeperException e) {
      // The region, the counter or the request changed meanwhile: the region is reopened by the
      // reconciler's rules, the request tried again.
      LOG.warn("{}: split not committed ({}); next pass", region, e.code());
      return;
    }
    result.remove(region.id());
    for (RegionDescriptor daughter : daughters) {
      result.put(daughter.id(), new RegionStore.Versioned(daughter, 0));
    }
    metrics.split();
    // The split's unavailable time in the master: from the seal's answer to this pass, and the
    // commit's reads and transaction.
    long now = System.nanoTime();
    LOG.info(
        "split region {} at {} into {} (sealed {} ms before this pass, committed in {} ms)",
        region.id(),
        Keys.print(key),
        new ArrayList<>(daughters),
        answeredAt.get() == 0 ? -1 : (committing - answeredAt.get()) / 1_000_000,
        (now - committing) / 1_000_000);
  }

  /**
   * Whether {@code region} may be sealed: open, whole, every member live, listed and holding it.
   */
  static boolean quiet(
      RegionDescriptor region,
      Map<String, ServerInfo> servers,
      Map<String, Map<Long, HeldRegion>> held) {
    if (region.state() != RegionState.OPEN
        || region.primary().isEmpty()
        || !region.joining().isEmpty()) {
      return false;
    }
    for (String member : region.members()) {
      Map<Long, HeldRegion> regions = held.get(member);
      HeldRegion holds = regions == null ? null : regions.get(region.id());
      if (!servers.containsKey(member)
          || holds == null
          || holds.epoch() != region.epoch()
          || holds.role() != region.roleOf(member)) {
        return false;
      }
    }
    return true;
  }

  private static ControlReply failed(Throwable failure) {
    Throwable cause = failure.getCause() != null ? failure.getCause() : failure;
    return ControlReply.failed(StatusCode.IO_ERROR, String.valueOf(cause.getMessage()));
  }
}
