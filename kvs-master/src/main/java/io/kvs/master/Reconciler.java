package io.kvs.master;

import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.ControlClient;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlReply;
import io.kvs.core.control.HeldRegion;
import io.kvs.core.control.StreamKey;
import io.kvs.master.status.RecoveryLog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pass of the active master over the cluster: bootstrap if there is no cluster yet, then bring
 * every region to where the map says it is. Level-triggered: it compares what the map records with
 * what each live server reports holding, so a pass after any failure (its own, or a previous
 * master's half-way through a recovery) repairs what the previous one left. Every change to a
 * region's group is written to the map (versioned) before any server is told of it, so the map is
 * the record of each recovery step.
 *
 * <p>Rules (docs/ARCHITECTURE.md "Failure recovery"):
 *
 * <ul>
 *   <li><b>A member gone</b> (its ZooKeeper session expired): the group shrinks to its live members
 *       at a raised epoch. If the primary is gone, a live backup in sync (not {@code joining}) is
 *       promoted. If no live member can serve, the region goes OFFLINE with its group kept, until a
 *       member that can returns.
 *   <li><b>Under-replicated</b> (fewer members than the replication factor, all live and serving):
 *       a live server outside the group (fewest replicas first) is added as a backup, at a raised
 *       epoch. Under send-index every backup of a new epoch is {@code joining} until its primary
 *       reports that its catch-up is done; only then may it be promoted.
 *   <li><b>A member that lost the region</b> (it restarted before its old session expired, or
 *       closed it): the group is reopened at a raised epoch, backups first; a primary that lost it,
 *       even while it was being reopened, hands it to a backup in sync that still holds it ({@link
 *       #primaryLostIt}).
 *   <li><b>A backup that refused an open in sync</b> (it holds no stream of the region: it
 *       restarted, and an open computed before reached its new process; {@link
 *       ControlReply#REJOIN}): the region is reopened at a raised epoch with it joining.
 *   <li><b>A server holding a region it is no member of</b> (a primary that was paused while its
 *       group moved on) is told to close it.
 * </ul>
 *
 * <p>The master never waits on one server to act on another: every live server is listed at once,
 * each with a short bound, and a server that did not answer is sent nothing this pass. Every
 * region's opens are sent at once, member by member in the region's order (backups first, then the
 * primary; a split's daughters, whose backups all join, on every member at the same time: the
 * primary's open is the end of the split's unavailable window, and its streams send their OPEN
 * again until the backups have opened the daughter), each server taking commands through a bounded
 * lane of its own ({@link ServerCommands}): a server slow to open delays only the regions it is a
 * member of. A pass waits for its opens at most {@link #OPEN_WAIT}; those still on their way then
 * go on (each bounded by the control timeout) and are not sent again while they do, and the pass
 * after they end records what they did.
 */
final class Reconciler implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Reconciler.class);

  /**
   * Bound on one server's answer to {@code list} (a few milliseconds of work): a paused server must
   * not hold up the pass. Every pass waits this long at most, so it is a part of every recovery's
   * time: a server paused past its session is found gone by the pass after its node is, not two
   * bounds later.
   */
  static final Duration LIST_TIMEOUT = Duration.ofSeconds(1);

  private final MasterOptions options;
  private final RegionStore store;
  private final ControlClient control;
  private final PlannedChanges planned;
  private final Balancer balancer;
  private final Splits splits;
  private final Handovers handovers;
  private final Merges merges;
  private final ServerCommands commands;

  /** Asks for another pass: opens that finished after their pass stopped waiting have news. */
  private final Runnable passWanted;

  /**
   * Bound on how long a pass waits for the opens it sent before recording what they achieved: an
   * open that takes longer (a long log replay, a paused server) goes on, bounded by the control
   * timeout, and the pass after it finishes records it. Short, because no other pass runs
   * meanwhile: with 2 s, a pass during the recovery of a server holding 1,000 regions took up to
   * 1.65 s, and anything that happened meanwhile waited for it (a sealed split's commit, which a
   * pass waiting for opens now makes at once all the same).
   */
  static final Duration OPEN_WAIT = Duration.ofMillis(500);

  /**
   * A pass waits for its opens only until it has run this long (but at least {@link
   * #OPEN_WAIT_MIN}): a pass that decided and wrote 1,000 regions' recovery took up to 1.2 s with
   * 500 ms of waiting, over the 1 s a pass should take at most (issue 28).
   */
  static final Duration PASS_WAITS_UNTIL = Duration.ofMillis(600);

  /** The least a pass waits for the opens it sent (an open takes a few milliseconds). */
  static final Duration OPEN_WAIT_MIN = Duration.ofMillis(50);

  /** A pass this long says where its time went (the log). */
  private static final Duration SLOW_PASS = Duration.ofMillis(500);

  /** What a pass waiting for its opens is woken by when a seal was answered (not a step). */
  private static final Object SEAL_ANSWERED = new Object();

  /** The queue of the pass waiting for its opens now, or null (pass thread and seals' replies). */
  private volatile BlockingQueue<Object> waking;

  /**
   * Per region, the backups it was last reopened for because their streams failed, less those
   * listed since (pass thread only; {@link #failedAgainUnreachable}).
   */
  private final Map<Long, Set<String>> reopenedForFailedStreams = new HashMap<>();

  /** Per region, the opens last sent (pass thread only). */
  private final Map<Long, Opening> openings = new HashMap<>();

  /** Per server, its {@code list} in flight: at most one, however slowly it answers. */
  private final Map<String, CompletableFuture<ControlReply>> listing = new HashMap<>();

  /** The closes in flight ({@code server/region}): a stray is told once until it answers. */
  private final Set<String> closing = ConcurrentHashMap.newKeySet();

  /** When the recovery of each region still recovering began (nanoTime). */
  private final Map<Long, Long> recovering = new HashMap<>();

  /** The recent recoveries, step by step, for the status page. */
  private final RecoveryLog recoveries = new RecoveryLog();

  /**
   * Bound on a catch-up: a region whose backups are still joining this long after its epoch began
   * (as this master saw it) is reopened at a raised epoch, which starts a new stream.
   */
  static final Duration CATCH_UP_TIMEOUT = Duration.ofSeconds(30);

  /**
   * Per region, the highest epoch a member reported it is at when it refused a command as stale (a
   * command the master did not send raised it): the region is reopened above it.
   */
  private final Map<Long, Long> epochFloor = new HashMap<>();

  /**
   * Per region, the backups that refused an open in sync because they hold no stream of it ({@link
   * ControlReply#REJOIN}): the region is reopened with them joining.
   */
  private final Map<Long, Refused> rejoin = new HashMap<>();

  /** The backups that refused an open of a region in sync at {@code epoch} (pass thread only). */
  private record Refused(long epoch, Set<String> members) {}

  /** The epoch each region with joining backups was first seen at, and when (nanoTime). */
  private final Map<Long, long[]> joiningSince = new HashMap<>();

  private final MasterMetrics metrics;

  /**
   * Each region's stream key at the epoch this master drew it for (docs/PROTOCOL.md, "Control
   * RPC"): every member of one epoch gets the same key. Kept in memory only (ZooKeeper is readable
   * by anyone); a master that finds a region half-opened at an epoch whose key another master drew
   * moves it to a new epoch.
   */
  private final Map<Long, EpochKey> streamKeys = new HashMap<>();

  /** The servers and the configuration the last pass read ({@link #commitSealedFirst}). */
  private Map<String, ServerInfo> lastServers;

  private ClusterConfig lastConfig;

  /** When this pass asked the servers what they hold (nanoTime). */
  private long listsAskedAt;

  private record EpochKey(long epoch, StreamKey key) {}

  /** This master's election node, which every write creating the cluster checks. */
  private final Supplier<String> fence;

  /**
   * @param passWanted asks for a pass soon (the master's loop coalesces requests)
   * @param fence this master's node in the election ({@link Election#ourPath})
   */
  Reconciler(
      MasterOptions options,
      RegionStore store,
      ControlClient control,
      MasterMetrics metrics,
      Runnable passWanted,
      Supplier<String> fence) {
    this.fence = fence;
    this.options = options;
    this.store = store;
    this.control = control;
    this.commands = new ServerCommands(control);
    this.planned = new PlannedChanges(store);
    this.balancer = new Balancer(options.balancer(), metrics, System::nanoTime);
    this.handovers = new Handovers(commands, passWanted);
    this.splits =
        new Splits(
            store,
            commands,
            metrics,
            () -> {
              passWanted.run();
              BlockingQueue<Object> waiting = waking;
              if (waiting != null) {
                waiting.offer(SEAL_ANSWERED); // the pass waiting for its opens commits it now
              }
            },
            options.split(),
            handovers::preparing);
    this.merges =
        new Merges(
            store,
            commands,
            metrics,
            passWanted,
            options.merge(),
            options.split(),
            handovers::preparing);
    this.metrics = metrics;
    this.passWanted = passWanted;
  }

  /**
   * Commits the splits whose seals were answered before the pass reads anything (the servers, the
   * configuration, the map: a few ZooKeeper round trips, 15-20 ms under load in the elastic
   * benchmark, while each sealed region is out of service), from the regions this master knows and
   * the servers and configuration of the last pass. Every write of the commit is conditional: a
   * region, counter or request that changed meanwhile fails it, and the region is reopened and
   * sealed again as after any failed commit.
   */
  private void commitSealedFirst() throws Exception {
    if (lastServers == null || lastConfig == null || !splits.anySealed()) {
      return;
    }
    Map<Long, RegionStore.Versioned> before = store.knownRegions();
    if (before != null) {
      commitSealed(before, lastServers, lastConfig);
    }
  }

  /**
   * Commits the splits whose seals were answered ({@link Splits#commitSealed}) and sends their
   * daughters' opens; returns {@code before} with each parent whose split committed replaced by its
   * daughters. No server holds a region just created: with every backup joining (its primary's
   * streams wait for none), the primary's open need not wait for theirs (a stream's OPEN that
   * reaches a backup first is sent again until it opened). The pass's own opens find them on their
   * way and send nothing again.
   */
  private Map<Long, RegionStore.Versioned> commitSealed(
      Map<Long, RegionStore.Versioned> before,
      Map<String, ServerInfo> servers,
      ClusterConfig config)
      throws Exception {
    Map<Long, RegionStore.Versioned> after = splits.commitSealed(before, config);
    if (after.keySet().equals(before.keySet())) {
      return after;
    }
    Map<String, Map<Long, HeldRegion>> nothing = new HashMap<>();
    servers.keySet().forEach(server -> nothing.put(server, Map.of()));
    after.forEach(
        (id, daughter) -> {
          if (!before.containsKey(id)) {
            RegionDescriptor region = daughter.region();
            boolean atOnce = region.joining().containsAll(region.backups());
            open(region, daughter.version(), servers, nothing, config, atOnce);
          }
        });
    return after;
  }

  /** Whether every region is OPEN with its whole group in sync after this pass. */
  boolean pass() throws Exception {
    long beganAt = System.nanoTime();
    commitSealedFirst();
    Map<String, ServerInfo> servers = store.servers();
    ClusterConfig config = store.config().orElse(null);
    if (config == null) {
      return bootstrap(servers);
    }
    lastServers = servers;
    lastConfig = config;
    listsAskedAt = System.nanoTime();
    Map<String, CompletableFuture<ControlReply>> lists = askLists(servers);
    // A region sealed for its split is out of service until its daughters open: committed while
    // the servers list what they hold, and the daughters' opens sent at once.
    Map<Long, RegionStore.Versioned> before = store.regionsForPass();
    Map<Long, RegionStore.Versioned> known = commitSealed(before, servers, config);
    // Servers whose list failed are absent: what they hold is unknown this pass. A seal answered
    // while the lists come is committed at once (they take 15-60 ms under load).
    Map<String, Map<Long, HeldRegion>> held = collectLists(lists, known, servers, config);
    long listedAt = System.nanoTime();
    reopenedForFailedStreams.values().forEach(backups -> backups.removeIf(held::containsKey));
    Map<Long, RegionStore.Versioned> regions =
        merges.advance(
            splits.advance(known, servers, held, config, merges.pending()),
            servers,
            held,
            config,
            splits,
            splits.pending());
    handovers.retain(regions.keySet());
    openings.keySet().retainAll(regions.keySet()); // those of regions split or merged away
    planned.refresh();
    Map<String, Integer> replicas = new HashMap<>();
    servers.keySet().forEach(server -> replicas.put(server, 0));
    for (RegionStore.Versioned versioned : regions.values()) {
      versioned.region().members().forEach(member -> replicas.merge(member, 1, Integer::sum));
    }
    balancer.plan(
        new Balancer.View(
            regions.values().stream().map(RegionStore.Versioned::region).toList(),
            servers.keySet(),
            held,
            planned.decommissioned(),
            planned.movesPending() || merges.pending(),
            store.balancerSwitchedOff(),
            config,
            merges.merging()));
    long plannedAt = System.nanoTime();
    boolean allOpen = true;
    List<Decision> decisions = new ArrayList<>();
    List<Step> steps = new ArrayList<>();
    for (RegionStore.Versioned versioned : regions.values()) {
      if (splits.sealing(versioned.region().id()) || merges.retiring(versioned.region().id())) {
        allOpen = false; // its primary is sealing or retiring it: no rule may reopen it meanwhile
        continue;
      }
      try {
        Decision decision = decide(versioned, servers, held, replicas, config);
        if (decision == null) {
          allOpen = false;
        } else {
          decisions.add(decision);
        }
      } catch (KeeperException.BadVersionException e) {
        LOG.info("region {} changed meanwhile; next pass", versioned.region().id());
        allOpen = false;
      }
    }
    // Every decision written at once (one ZooKeeper log sync for many: a server holding a
    // thousand regions lost is a thousand shrinks), then the opens of those written.
    List<RegionStore.Versioned> writes = new ArrayList<>();
    for (Decision decision : decisions) {
      if (decision.changed()) {
        writes.add(new RegionStore.Versioned(decision.region(), decision.from().version()));
      }
    }
    long decidedAt = System.nanoTime();
    Map<Long, RegionStore.Written> written = store.updateAll(writes);
    long wroteAt = System.nanoTime();
    for (Decision decision : decisions) {
      int version = decision.from().version();
      if (decision.changed()) {
        RegionStore.Written write = written.get(decision.region().id());
        if (write.failure() != null) {
          LOG.info(
              "region {} not written ({}); next pass",
              decision.region().id(),
              write.failure().code());
          allOpen = false;
          continue;
        }
        version = write.version();
        for (AfterWrite after : decision.afterWrite()) {
          after.run();
        }
      }
      steps.add(open(decision.region(), version, servers, held, config));
    }
    closeStrays(regions, servers, held);
    long sentAt = System.nanoTime();
    // Every region's opens are on their way at once; the pass records what they achieved region by
    // region as they end, for at most OPEN_WAIT. Opens still in flight then go on, and a later pass
    // finds them done.
    // A seal answered meanwhile is committed at once (its region is out of service until then);
    // the queue holds every step once and at most one wake-up per seal in flight.
    BlockingQueue<Object> ended = new LinkedBlockingQueue<>();
    steps.forEach(step -> step.opening().tail.whenComplete((accepted, failure) -> ended.add(step)));
    Set<Step> finished = Collections.newSetFromMap(new IdentityHashMap<>());
    List<Outcome> outcomes = new ArrayList<>(steps.size());
    // Waiting ends OPEN_WAIT after the opens went out, or sooner once the pass ran
    // PASS_WAITS_UNTIL (recording what they achieved takes its time too: up to 350 ms for 1,000
    // regions), but never before OPEN_WAIT_MIN.
    long deadline =
        Math.max(
            sentAt + OPEN_WAIT_MIN.toNanos(),
            Math.min(sentAt + OPEN_WAIT.toNanos(), beganAt + PASS_WAITS_UNTIL.toNanos()));
    waking = ended;
    try {
      while (finished.size() < steps.size()) {
        Object next = ended.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (next == null) {
          break;
        }
        if (next == SEAL_ANSWERED) {
          commitSealedFirst();
          continue;
        }
        Step step = (Step) next;
        finished.add(step);
        outcomes.add(outcome(step, opened(step.opening()), held));
      }
    } finally {
      waking = null;
    }
    long waitedAt = System.nanoTime();
    for (Step step : steps) {
      if (!finished.contains(step)) {
        outcomes.add(outcome(step, opened(step.opening()), held));
      }
    }
    allOpen &= record(outcomes, servers, config);
    long recordedAt = System.nanoTime();
    if (recordedAt - beganAt >= SLOW_PASS.toNanos()) {
      LOG.info(
          "a pass took {} ms: servers and lists {}, splits and plans {}, {} regions decided in"
              + " {}, {} written in {}, {} opens sent in {}, waited {}, {} outcomes recorded in {}",
          (recordedAt - beganAt) / 1_000_000,
          (listedAt - beganAt) / 1_000_000,
          (plannedAt - listedAt) / 1_000_000,
          regions.size(),
          (decidedAt - plannedAt) / 1_000_000,
          writes.size(),
          (wroteAt - decidedAt) / 1_000_000,
          steps.size(),
          (sentAt - wroteAt) / 1_000_000,
          (waitedAt - sentAt) / 1_000_000,
          outcomes.size(),
          (recordedAt - waitedAt) / 1_000_000);
    }
    metrics.observed(
        servers.size(),
        regions.values().stream().map(RegionStore.Versioned::region).toList(),
        config.replicationFactor());
    return allOpen;
  }

  /** Commands to servers in flight or waiting in their lanes (metrics). */
  int pendingCommands() {
    return commands.pending();
  }

  /** The recent recoveries this master drove (for the status page). */
  RecoveryLog recoveries() {
    return recoveries;
  }

  @Override
  public void close() {
    openings.values().forEach(Opening::supersede); // nothing more is sent
  }

  private boolean bootstrap(Map<String, ServerInfo> servers) throws Exception {
    if (servers.size() < options.expectedServers()) {
      LOG.info(
          "waiting for {} servers before creating the cluster ({} live)",
          options.expectedServers(),
          servers.size());
      return false;
    }
    ClusterConfig config = options.bootstrap();
    Assignment assignment = new Assignment(new ArrayList<>(servers.keySet()));
    List<byte[]> splits = config.effectiveSplits();
    List<RegionDescriptor> regions = new ArrayList<>();
    for (int i = 0; i < config.regions(); i++) {
      byte[] start = i == 0 ? new byte[0] : splits.get(i - 1);
      byte[] end = i == config.regions() - 1 ? new byte[0] : splits.get(i);
      Assignment.Group group = assignment.next(config.replicationFactor());
      regions.add(
          new RegionDescriptor(
              i + 1, start, end, group.primary(), group.backups(), 1, RegionState.OPENING));
    }
    try {
      String leading = fence.get();
      if (leading == null) {
        return false; // not in the election yet
      }
      store.createCluster(config, regions, leading);
      LOG.info(
          "created cluster {}: {} regions, replication {} ({}) over {}",
          options.cluster(),
          config.regions(),
          config.replicationFactor(),
          config.mode().configName(),
          servers.keySet());
    } catch (KeeperException.NodeExistsException e) {
      LOG.info("the cluster was created meanwhile");
    }
    return false;
  }

  /**
   * A region after this pass's decision: its descriptor as the map now records it (at {@code
   * version}), and the opens sent to bring its members to it.
   */
  private record Step(RegionDescriptor region, int version, Opening opening) {}

  /** What {@link #afterWrite} runs once a decision's write succeeded. */
  private interface AfterWrite {
    void run() throws Exception;
  }

  /**
   * A region as this pass decided it: {@code region} to be written over {@code from} (the same
   * descriptor: nothing to write), and what to do once written.
   */
  private record Decision(
      RegionStore.Versioned from, RegionDescriptor region, List<AfterWrite> afterWrite) {
    boolean changed() {
      return !region.equals(from.region());
    }
  }

  /**
   * Decides the step {@code versioned} needs, to be written to the map (with every other region's,
   * together) before any server is told ({@link #open}); null if the region cannot be served
   * (offline, written now).
   */
  private Decision decide(
      RegionStore.Versioned versioned,
      Map<String, ServerInfo> servers,
      Map<String, Map<Long, HeldRegion>> held,
      Map<String, Integer> replicas,
      ClusterConfig config)
      throws Exception {
    RegionDescriptor region = versioned.region();
    int version = versioned.version();
    List<AfterWrite> afterWrite = new ArrayList<>();
    Opening previous = openings.get(region.id());
    if (previous != null && previous.tail.isDone()) {
      settle(previous); // finished after its pass stopped waiting: what it reported counts now
    }
    boolean sendIndex = config.mode() == ReplicationMode.SEND_INDEX;
    List<String> gone =
        region.members().stream().filter(member -> !servers.containsKey(member)).toList();
    HeldRegion primaryHolds = holding(region, region.primary(), held);
    RegionDescriptor next;
    if (region.primary().isEmpty() || !gone.isEmpty()) {
      recovering.putIfAbsent(region.id(), System.nanoTime());
      RegionDescriptor shrunk = shrink(region, servers.keySet(), held, sendIndex);
      if (shrunk == null) {
        if (region.state() != RegionState.OFFLINE) {
          RegionDescriptor offline =
              region.reassigned(region.primary(), region.backups()).withState(RegionState.OFFLINE);
          store.update(offline, version);
          // Live backups keep holding it: one that never restarted may still be promoted.
          LOG.warn(
              "{} offline: members {} are gone and no live one holds every write", offline, gone);
          recoveries.step(region.id(), "offline", "members " + gone + " gone; none live in sync");
        }
        return null;
      }
      LOG.warn(
          "{}: members {} are gone; {}",
          shrunk,
          gone,
          shrunk.primary().equals(region.primary())
              ? "the group shrinks"
              : "backup " + shrunk.primary() + " is promoted");
      recoveries.step(
          region.id(),
          shrunk.primary().equals(region.primary()) ? "member gone" : "backup promoted",
          "members " + gone + " gone; epoch " + shrunk.epoch() + " on " + shrunk.members());
      region = shrunk;
    } else if (epochFloor.getOrDefault(region.id(), 0L) >= region.epoch()) {
      // A member is at a higher epoch than the map (raised by a command the master did not send):
      // every open at the map's epoch is refused, so the region moves past it.
      RegionDescriptor reopening = region.atEpoch(epochFloor.remove(region.id()) + 1);
      LOG.warn("{} reopened above an epoch a member was raised to", reopening);
      recoveries.step(region.id(), "reopened", "above an epoch a member was raised to");
      region = reopening;
    } else if (region.state() == RegionState.OFFLINE) {
      RegionDescriptor reopening =
          region.reassigned(
              region.primary(), region.backups(), sendIndex ? region.backups() : List.of());
      region = reopening;
    } else if (sendIndex && !mustRejoin(region).isEmpty()) {
      // Backups opened in sync refused: they hold no stream of the region (restarted before their
      // old sessions expired, or closed it), so what their disks hold may lack acknowledged writes.
      // They join again, never promoted before their catch-up ends.
      List<String> rejoining = mustRejoin(region);
      rejoin.remove(region.id());
      RegionDescriptor reopening =
          region.reassigned(region.primary(), region.backups(), union(region.joining(), rejoining));
      LOG.warn(
          "{} reopened at a raised epoch: {} hold no stream of it (restarted)",
          reopening,
          rejoining);
      recoveries.step(region.id(), "reopened", "backups " + rejoining + " restarted; they rejoin");
      region = reopening;
    } else if (primaryLostIt(region, held, sendIndex)) {
      // The primary no longer holds the region (it restarted before its session expired): its disk
      // may lack writes every backup in sync holds (they were acknowledged once in memory), so one
      // of those is promoted and the old primary rejoins as a backup; with none, it leads again.
      recovering.putIfAbsent(region.id(), System.nanoTime());
      String promoted = promotable(region, held, sendIndex);
      RegionDescriptor reopening;
      if (promoted != null) {
        List<String> backups = new ArrayList<>(region.backups());
        backups.remove(promoted);
        backups.add(region.primary());
        reopening = region.reassigned(promoted, backups, backups);
        LOG.warn(
            "{}: primary {} lost the region (restarted); backup {} in sync is promoted",
            reopening,
            region.primary(),
            promoted);
      } else {
        reopening =
            region.reassigned(
                region.primary(), region.backups(), sendIndex ? region.backups() : List.of());
        LOG.warn("{} reopened at a raised epoch: its primary lost it", reopening);
      }
      recoveries.step(
          region.id(),
          promoted != null ? "backup promoted" : "reopened",
          "primary " + region.primary() + " lost it; epoch " + reopening.epoch());
      region = reopening;
    } else if (region.state() != RegionState.OFFLINE
        && primaryHolds != null
        && !primaryHolds.failed().isEmpty()
        && !failedAgainUnreachable(region, primaryHolds.failed(), held)) {
      // Every member is live, yet the primary's stream to some backup broke (a timeout, a refused
      // message): writes that need it wait, so the region is opened again with those backups
      // joining (their streams start over); backups in sync keep theirs. Not again for backups
      // this reopen made joining that have answered no list since (failedAgainUnreachable).
      List<String> joining = union(region.joining(), primaryHolds.failed());
      RegionDescriptor reopening =
          region.reassigned(region.primary(), region.backups(), sendIndex ? joining : List.of());
      reopenedForFailedStreams.put(region.id(), new HashSet<>(primaryHolds.failed()));
      LOG.warn(
          "{} reopened at a raised epoch: replication to {} failed",
          reopening,
          primaryHolds.failed());
      recoveries.step(
          region.id(), "reopened", "replication to " + primaryHolds.failed() + " failed");
      region = reopening;
    } else if (region.state() == RegionState.OPEN && catchUpOverdue(region)) {
      RegionDescriptor reopening =
          region.reassigned(region.primary(), region.backups(), region.joining());
      LOG.warn(
          "{} reopened at a raised epoch: its catch-up did not finish within {} s",
          reopening,
          CATCH_UP_TIMEOUT.toSeconds());
      recoveries.step(region.id(), "reopened", "catch-up of " + region.joining() + " overdue");
      region = reopening;
    } else if (region.state() == RegionState.OPEN && !lostBy(region, held).isEmpty()) {
      // A live backup no longer holds the region as the map says (it restarted before its old
      // session expired, or closed the region): it joins again, its stream starting over.
      List<String> lost = lostBy(region, held);
      RegionDescriptor reopening =
          region.reassigned(
              region.primary(),
              region.backups(),
              sendIndex ? union(region.joining(), lost) : List.of());
      LOG.warn("{} reopened at a raised epoch: {} lost it", reopening, lost);
      recoveries.step(region.id(), "reopened", "backups " + lost + " lost it");
      region = reopening;
    } else if (handovers.preparing(region)) {
      // Its primary merges ahead of the handover decided: written once it answered, nothing else
      // meanwhile.
      if ((next = handovers.take(region)) != null) {
        RegionDescriptor moved = next;
        afterWrite.add(() -> planned.applied(moved));
        region = next;
      }
    } else if ((next = planned.next(region, servers.keySet(), held, replicas, config)) != null) {
      LOG.info("{}: planned change", next);
      if (!handovers.preparesFirst(region, next, servers, config)) {
        RegionDescriptor moved = next;
        afterWrite.add(() -> planned.applied(moved));
        region = next;
      }
    } else if ((next = merges.alignment(region)) != null
        || (next = balancer.next(region)) != null) {
      // A merge's step towards one group, else the balancer's move (asked only if no step).
      if (!handovers.preparesFirst(region, next, servers, config)) {
        region = next;
      }
    } else if (region.state() == RegionState.OPEN
        && region.joining().isEmpty()
        && region.members().size() < config.replicationFactor()
        && sendIndex) {
      String added =
          leastLoaded(
              servers.keySet(), region.members(), held, replicas, planned::isDecommissioned);
      if (added != null) {
        List<String> backups = new ArrayList<>(region.backups());
        backups.add(added);
        RegionDescriptor grown =
            region.reassigned(region.primary(), backups, union(region.joining(), List.of(added)));
        replicas.merge(added, 1, Integer::sum);
        recovering.putIfAbsent(region.id(), System.nanoTime());
        LOG.info("{}: {} re-replicates it", grown, added);
        recoveries.step(region.id(), "re-replicated", added + " joins as a backup");
        region = grown;
      }
    }
    if (awaitsOpen(region, held) && !knowsStreamKey(region) && heldAtItsEpoch(region, held)) {
      // Members hold this epoch with a key another master drew: those still to open could neither
      // prove nor check it, so the region moves on to an epoch whose key this master draws (streams
      // of backups in sync carry on across it).
      RegionDescriptor reopening = region.atEpoch(region.epoch() + 1);
      LOG.info(
          "{} reopened: this master holds no stream key of epoch {}", reopening, region.epoch());
      recoveries.step(region.id(), "reopened", "no stream key of epoch " + region.epoch());
      region = reopening;
    }
    return new Decision(versioned, region, afterWrite);
  }

  /**
   * Sends the opens the members of {@code region} (as written, at {@code version}) lack; the step
   * whose outcome the pass records.
   */
  private Step open(
      RegionDescriptor region,
      int version,
      Map<String, ServerInfo> servers,
      Map<String, Map<Long, HeldRegion>> held,
      ClusterConfig config) {
    return open(region, version, servers, held, config, false);
  }

  /**
   * As above; {@code atOnce}: every member's open is sent at the same time, not the backups' first
   * (a split's daughters, whose backups all join).
   */
  private Step open(
      RegionDescriptor region,
      int version,
      Map<String, ServerInfo> servers,
      Map<String, Map<Long, HeldRegion>> held,
      ClusterConfig config,
      boolean atOnce) {
    Opening opening = openings.get(region.id());
    if (opening != null
        && opening.opens(region)
        && (!opening.tail.isDone() || opening.acceptedSince(listsAskedAt))) {
      // The opens of this very group are still on their way, or were all accepted after this
      // pass asked the servers what they hold (their lists cannot show them yet; a split's
      // daughters opened as the pass began): not sent again.
      return new Step(region, version, opening);
    }
    if (opening != null) {
      opening.supersede(); // for a group the region has moved on from
    }
    opening = new Opening(region);
    openings.put(region.id(), opening);
    // Backups first, in order, so the primary finds them ready when it starts replicating, and a
    // handover's old primary (the first backup) is demoted before anything else. An old primary
    // that joins as a backup (send-index: it drops its own data to hold a replica, 260 ms of a
    // handover's unavailable window for a 70 MB region in the full elastic run) is only closed
    // first -- it stops serving once its last records reached its backups -- and then opened as a
    // backup beside the new primary's open, whose stream finds it ready or sends its OPEN again.
    String demoted = demotedPrimary(region, held);
    List<Map.Entry<ServerInfo, ControlCommand>> afterClose = new ArrayList<>();
    if (demoted != null) {
      opening.then(servers.get(demoted), new ControlCommand.Close(region.id(), region.epoch()));
    }
    List<String> order = new ArrayList<>(region.backups());
    order.add(region.primary());
    for (String member : order) {
      Map<Long, HeldRegion> regions = held.get(member);
      if (regions == null) {
        opening.unlisted = true; // not listed: it may be stuck, so it is sent nothing this pass
        continue;
      }
      if (!needsOpen(region, member, held)
          || (holdsAsMapSays(region, member, held) && !knowsStreamKey(region))) {
        // Held as the map says but for a joining list that changed: opened again only with the
        // stream key it holds (this master drew it); else it stays conservative (syncing each
        // write) until the region's next epoch.
        continue;
      }
      ControlCommand open =
          new ControlCommand.Open(
              region,
              config.mode(),
              config.minReplicas(),
              streamKey(region),
              member.equals(region.primary())
                  ? registrations(region.backups(), servers)
                  : Map.of());
      if (demoted != null) {
        afterClose.add(Map.entry(servers.get(member), open));
      } else if (atOnce) {
        opening.alongside(servers.get(member), open);
      } else {
        opening.then(servers.get(member), open);
      }
    }
    if (!afterClose.isEmpty()) {
      opening.thenAll(afterClose);
    }
    opening.noteAccepted();
    return new Step(region, version, opening);
  }

  /**
   * The registrations of {@code backups} as this pass read them: where the primary's streams
   * connect, without a ZooKeeper read of its own on the open's path (one missing is looked up
   * there).
   */
  private static Map<String, ServerInfo> registrations(
      List<String> backups, Map<String, ServerInfo> servers) {
    Map<String, ServerInfo> found = new HashMap<>();
    for (String backup : backups) {
      ServerInfo info = servers.get(backup);
      if (info != null) {
        found.put(backup, info);
      }
    }
    return found;
  }

  /**
   * The member of {@code region} listed holding it as its primary at an earlier epoch that the map
   * now makes a joining backup (a handover's old primary under send-index, which drops its data to
   * hold a replica), or null.
   */
  private static String demotedPrimary(
      RegionDescriptor region, Map<String, Map<Long, HeldRegion>> held) {
    for (String backup : region.joining()) {
      HeldRegion holds = held.getOrDefault(backup, Map.of()).get(region.id());
      if (holds != null && holds.role() == RegionRole.PRIMARY && holds.epoch() < region.epoch()) {
        return backup;
      }
    }
    return null;
  }

  /**
   * Whether every one of {@code failed} is a backup {@code region} was last reopened for (its
   * stream failed), still joining, that answered no list since. Such a backup cannot have caught up
   * (its new stream never got going), so no write waits for it, and opening the region again would
   * only fail its next stream the same way: a dead server's node outlives it by the session
   * timeout, and its regions were reopened on every pass (four times a second) until then.
   */
  private boolean failedAgainUnreachable(
      RegionDescriptor region, List<String> failed, Map<String, Map<Long, HeldRegion>> held) {
    Set<String> before = reopenedForFailedStreams.getOrDefault(region.id(), Set.of());
    return failed.stream()
        .allMatch(
            backup ->
                before.contains(backup)
                    && region.joining().contains(backup)
                    && !held.containsKey(backup));
  }

  /**
   * What {@code step}'s opens achieved, to be recorded: the region is OPEN once every member holds
   * it, and joining backups its primary reports in sync are cleared, in one write.
   *
   * @param opened whether every member now holds the region as the map says (false while some open
   *     is still on its way)
   */
  private record Outcome(
      Step step, boolean opened, RegionDescriptor region, List<String> caughtUp) {
    boolean changed() {
      return region != step.region();
    }
  }

  private static Outcome outcome(
      Step step, boolean opened, Map<String, Map<Long, HeldRegion>> held) {
    RegionDescriptor region = step.region();
    if (opened && region.state() != RegionState.OPEN) {
      region = region.withState(RegionState.OPEN);
    }
    HeldRegion reported = holding(region, region.primary(), held);
    List<String> caughtUp = List.of();
    if (opened && !region.joining().isEmpty() && reported != null) {
      caughtUp = region.joining().stream().filter(reported.inSync()::contains).toList();
      if (!caughtUp.isEmpty()) {
        region = region.withInSync(caughtUp);
      }
    }
    return new Outcome(step, opened, region, caughtUp);
  }

  /**
   * Records {@code outcomes} in the map, their writes together ({@link RegionStore#updateAll}: a
   * recovery of a thousand regions wrote them one round trip after another, 12 s of a 15 s
   * recovery). Whether every group is whole (open, none joining, at full strength); a region
   * changed meanwhile is not (next pass).
   */
  private boolean record(
      List<Outcome> outcomes, Map<String, ServerInfo> servers, ClusterConfig config)
      throws Exception {
    List<RegionStore.Versioned> updates = new ArrayList<>();
    for (Outcome outcome : outcomes) {
      if (outcome.changed()) {
        updates.add(new RegionStore.Versioned(outcome.region(), outcome.step().version()));
      }
    }
    Map<Long, RegionStore.Written> written =
        updates.isEmpty() ? Map.of() : store.updateAll(updates);
    boolean allWhole = true;
    KeeperException failed = null;
    for (Outcome outcome : outcomes) {
      RegionDescriptor region = outcome.region();
      RegionStore.Written write = written.get(region.id());
      if (outcome.changed() && write.failure() != null) {
        if (!(write.failure() instanceof KeeperException.BadVersionException)) {
          failed = failed == null ? write.failure() : failed;
        }
        LOG.info("region {} changed meanwhile; next pass", region.id());
        allWhole = false;
        continue;
      }
      if (outcome.step().region().state() != RegionState.OPEN
          && region.state() == RegionState.OPEN) {
        LOG.info(
            "region {} [{}, {}) open at epoch {} on {}",
            region.id(),
            Keys.print(region.start()),
            Keys.print(region.end()),
            region.epoch(),
            region.members());
      }
      if (!outcome.caughtUp().isEmpty()) {
        LOG.info("region {}: backups {} hold every write", region.id(), outcome.caughtUp());
      }
      allWhole &= whole(region, outcome.opened(), servers, config);
    }
    if (failed != null) {
      throw failed; // the pass fails, as a synchronous write's failure fails it
    }
    return allWhole;
  }

  /** Whether {@code region}, now recorded, is whole; ends its recovery if it is. */
  private boolean whole(
      RegionDescriptor region,
      boolean opened,
      Map<String, ServerInfo> servers,
      ClusterConfig config) {
    boolean whole =
        opened
            && region.joining().isEmpty()
            && (region.members().size() >= config.replicationFactor()
                || region.members().size() >= servers.size());
    if (whole) {
      recoveries.recovered(region.id());
    }
    Long started = whole ? recovering.remove(region.id()) : null;
    if (started != null) {
      metrics.recovered(System.nanoTime() - started);
      LOG.info(
          "recovery of region {} done in {} ms: {}",
          region.id(),
          (System.nanoTime() - started) / 1_000_000,
          region);
    }
    return whole;
  }

  /** {@code region}'s stream key at its epoch, drawn on first use. */
  private StreamKey streamKey(RegionDescriptor region) {
    EpochKey known = streamKeys.get(region.id());
    if (known == null || known.epoch() != region.epoch()) {
      known = new EpochKey(region.epoch(), StreamKey.random());
      streamKeys.put(region.id(), known);
    }
    return known.key();
  }

  private boolean knowsStreamKey(RegionDescriptor region) {
    EpochKey known = streamKeys.get(region.id());
    return known != null && known.epoch() == region.epoch();
  }

  /** Whether a listed member of {@code region} does not hold it as the map says. */
  private static boolean awaitsOpen(
      RegionDescriptor region, Map<String, Map<Long, HeldRegion>> held) {
    return region.members().stream()
        .anyMatch(member -> held.containsKey(member) && !holdsAsMapSays(region, member, held));
  }

  /** Whether some member holds {@code region} at its epoch (opened with that epoch's key). */
  private static boolean heldAtItsEpoch(
      RegionDescriptor region, Map<String, Map<Long, HeldRegion>> held) {
    return region.members().stream()
        .map(member -> held.getOrDefault(member, Map.of()).get(region.id()))
        .anyMatch(holds -> holds != null && holds.epoch() == region.epoch());
  }

  /**
   * {@code region}'s group without its dead members, at a raised epoch, with a live backup in sync
   * promoted if its primary is dead; null if no live member holds every acknowledged write. Backups
   * in sync stay in sync under the same primary; under a new primary (send-index) every backup
   * joins anew, its stream starting over from the new primary's state. Only a backup still holding
   * the region (as a backup, at this epoch or an earlier one) may be promoted: a backup that
   * restarted lost what had landed in its memory (acknowledged writes its disk may lack), so it is
   * no longer in sync; with no such backup the region waits OFFLINE for its primary, whose own disk
   * holds all but the last flush window.
   */
  private static RegionDescriptor shrink(
      RegionDescriptor region,
      Set<String> live,
      Map<String, Map<Long, HeldRegion>> held,
      boolean sendIndex) {
    List<String> backups = region.backups().stream().filter(live::contains).toList();
    String primary = region.primary();
    if (primary.isEmpty() || !live.contains(primary)) {
      primary =
          region.backupsInSync().stream()
              .filter(backup -> live.contains(backup) && stillHolds(region, backup, held))
              .findFirst()
              .orElse(null);
      if (primary == null) {
        return null;
      }
      String promoted = primary;
      backups = backups.stream().filter(backup -> !backup.equals(promoted)).toList();
      return region.reassigned(primary, backups, sendIndex ? backups : List.of());
    }
    return region.reassigned(primary, backups);
  }

  /** What {@code member} reports holding of {@code region} at its epoch in its role, or null. */
  private static HeldRegion holding(
      RegionDescriptor region, String member, Map<String, Map<Long, HeldRegion>> held) {
    HeldRegion holds = held.getOrDefault(member, Map.of()).get(region.id());
    return holds != null && holds.epoch() == region.epoch() && holds.role() == region.roleOf(member)
        ? holds
        : null;
  }

  /**
   * Whether {@code member} was listed holding {@code region} as a backup since before its current
   * epoch or at it: it has not restarted since it was opened, so what landed in its memory is
   * there.
   */
  static boolean stillHolds(
      RegionDescriptor region, String member, Map<String, Map<Long, HeldRegion>> held) {
    HeldRegion holds = held.getOrDefault(member, Map.of()).get(region.id());
    return holds != null && holds.role() == RegionRole.BACKUP && holds.epoch() <= region.epoch();
  }

  /**
   * Whether {@code region}'s primary, listed live, lost it (restarted before its old session
   * expired, or closed it): an OPEN region it does not hold at its epoch and role; or an OPENING
   * one (its open at a raised epoch not done yet, so holding it at an older epoch is expected) it
   * holds at no epoch at all while a backup in sync still holds it. The second is a primary killed
   * and restarted while its region was being reopened (chaos seed 1313: a replication cut, then the
   * primary killed): sending the open again would have it lead on a disk that may lack writes its
   * backups in sync acknowledged, and its backups would then catch up from it.
   */
  static boolean primaryLostIt(
      RegionDescriptor region, Map<String, Map<Long, HeldRegion>> held, boolean sendIndex) {
    Map<Long, HeldRegion> primaryHolds = held.get(region.primary());
    if (primaryHolds == null) {
      return false; // not listed this pass: nothing known
    }
    return switch (region.state()) {
      case OPEN -> !holdsAsMapSays(region, region.primary(), held);
      case OPENING ->
          !primaryHolds.containsKey(region.id()) && promotable(region, held, sendIndex) != null;
      default -> false;
    };
  }

  /**
   * The backup in sync that still holds {@code region} (listed as its backup since its epoch or
   * before, so never restarted since) to promote in its primary's place; null if none, or under
   * Build-Index.
   */
  static String promotable(
      RegionDescriptor region, Map<String, Map<Long, HeldRegion>> held, boolean sendIndex) {
    return sendIndex
        ? region.backupsInSync().stream()
            .filter(backup -> stillHolds(region, backup, held))
            .findFirst()
            .orElse(null)
        : null;
  }

  /**
   * The backups of {@code region}, not joining, that refused to open it in sync at its epoch
   * because they hold no stream of it. Refusals at another epoch are forgotten: a later epoch
   * opened them joining, or sends its opens again.
   */
  private List<String> mustRejoin(RegionDescriptor region) {
    Refused refused = rejoin.get(region.id());
    if (refused != null && refused.epoch() != region.epoch()) {
      rejoin.remove(region.id());
    }
    return refused == null ? List.of() : mustRejoin(region, refused.epoch(), refused.members());
  }

  /**
   * Of {@code refused}, the backups that refused to open {@code region} in sync at {@code epoch}:
   * those still in sync in it at that epoch.
   */
  static List<String> mustRejoin(RegionDescriptor region, long epoch, Set<String> refused) {
    return epoch != region.epoch()
        ? List.of()
        : region.backupsInSync().stream().filter(refused::contains).toList();
  }

  /** Whether {@code member} holds {@code region} at its epoch in the role the map gives it. */
  private static boolean holdsAsMapSays(
      RegionDescriptor region, String member, Map<String, Map<Long, HeldRegion>> held) {
    return holding(region, member, held) != null;
  }

  /**
   * Whether {@code member} needs {@code region}'s open sent: it does not hold it as the map says,
   * or it is its primary, opened with a backup joining that the map counts in sync since. Opened
   * again (same epoch), the primary learns it, and from then on that backup makes writes durable;
   * until then the primary syncs each write too, since a backup the master did not count in sync
   * when the primary failed would not be promoted (replication/replicator.h, "alone").
   */
  static boolean needsOpen(
      RegionDescriptor region, String member, Map<String, Map<Long, HeldRegion>> held) {
    HeldRegion holds = holding(region, member, held);
    return holds == null
        || (member.equals(region.primary()) && !region.joining().containsAll(holds.joining()));
  }

  private static List<String> union(List<String> first, List<String> second) {
    List<String> both = new ArrayList<>(first);
    second.stream().filter(item -> !both.contains(item)).forEach(both::add);
    return both;
  }

  /** Whether {@code region}'s backups have been joining at its epoch for too long. */
  private boolean catchUpOverdue(RegionDescriptor region) {
    if (region.joining().isEmpty()) {
      joiningSince.remove(region.id());
      return false;
    }
    long[] since = joiningSince.get(region.id());
    long now = System.nanoTime();
    if (since == null || since[0] != region.epoch()) {
      joiningSince.put(region.id(), new long[] {region.epoch(), now});
      return false;
    }
    return now - since[1] > CATCH_UP_TIMEOUT.toNanos();
  }

  /**
   * The listed live server outside {@code members} and not {@code excluded} (decommissioned) with
   * the fewest replicas, or null.
   */
  static String leastLoaded(
      Set<String> live,
      List<String> members,
      Map<String, Map<Long, HeldRegion>> held,
      Map<String, Integer> replicas,
      Predicate<String> excluded) {
    String best = null;
    for (String server : live) {
      if (members.contains(server) || !held.containsKey(server) || excluded.test(server)) {
        continue;
      }
      if (best == null || replicas.getOrDefault(server, 0) < replicas.getOrDefault(best, 0)) {
        best = server;
      }
    }
    return best;
  }

  /**
   * Tells servers to close regions they hold but are no members of (at the region's epoch, which
   * fences them): a primary paused while its group moved on, a member dropped from a group.
   */
  private void closeStrays(
      Map<Long, RegionStore.Versioned> regions,
      Map<String, ServerInfo> servers,
      Map<String, Map<Long, HeldRegion>> held) {
    held.forEach(
        (server, regionsHeld) ->
            regionsHeld.forEach(
                (regionId, holds) -> {
                  RegionStore.Versioned versioned = regions.get(regionId);
                  if (versioned != null && versioned.region().roleOf(server) == null) {
                    LOG.warn(
                        "{} still holds region {} at epoch {}, no member since epoch {}: closing",
                        server,
                        regionId,
                        holds.epoch(),
                        versioned.region().epoch());
                    close(
                        servers.get(server),
                        new ControlCommand.Close(regionId, versioned.region().epoch()));
                  }
                }));
  }

  /**
   * The backups listed this pass that do not hold {@code region} at its epoch as backups; backups
   * that could not be listed count as holding it (nothing is known).
   */
  private static List<String> lostBy(
      RegionDescriptor region, Map<String, Map<Long, HeldRegion>> held) {
    return region.backups().stream()
        .filter(backup -> held.containsKey(backup) && !holdsAsMapSays(region, backup, held))
        .toList();
  }

  /**
   * Asks every live server what it holds, at once (no thread waits: one exchange per server on the
   * control client's event loop, over a connection kept from the last pass), each bounded by {@link
   * #LIST_TIMEOUT}; {@link #collectLists} reads the answers: servers that did not answer, refused
   * (OVERLOADED) or whose list from an earlier pass is still in flight are absent.
   */
  private Map<String, CompletableFuture<ControlReply>> askLists(Map<String, ServerInfo> servers) {
    listing.keySet().retainAll(servers.keySet());
    Map<String, CompletableFuture<ControlReply>> calls = new HashMap<>();
    servers.forEach(
        (id, server) -> {
          CompletableFuture<ControlReply> previous = listing.get(id);
          if (previous != null && !previous.isDone()) {
            LOG.warn("{} has not answered the last pass's list yet: not asked again", id);
            return;
          }
          try {
            CompletableFuture<ControlReply> call =
                control.callAsync(
                    server.host(),
                    server.controlPort(),
                    new ControlCommand.ListRegions(),
                    LIST_TIMEOUT);
            listing.put(id, call);
            calls.put(id, call);
          } catch (RuntimeException e) { // the client is closing
            LOG.warn("cannot list the regions of {}: {}", id, e.toString());
          }
        });
    return calls;
  }

  /**
   * What the lists {@link #askLists} asked for say, each awaited up to its timeout. A seal answered
   * meanwhile is committed and its daughters' opens sent right away, {@code known} (the pass's
   * regions) updated.
   */
  private Map<String, Map<Long, HeldRegion>> collectLists(
      Map<String, CompletableFuture<ControlReply>> calls,
      Map<Long, RegionStore.Versioned> known,
      Map<String, ServerInfo> servers,
      ClusterConfig config)
      throws Exception {
    Map<String, Map<Long, HeldRegion>> held = new HashMap<>();
    long deadline = System.nanoTime() + LIST_TIMEOUT.plusMillis(200).toNanos();
    BlockingQueue<Object> ended = new LinkedBlockingQueue<>();
    calls.values().forEach(call -> call.whenComplete((reply, failure) -> ended.add(call)));
    waking = ended;
    try {
      int answered = 0;
      while (answered < calls.size()) {
        Object next = ended.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (next == null) {
          break; // those still out time out below
        }
        if (next != SEAL_ANSWERED) {
          answered++;
          continue;
        }
        Map<Long, RegionStore.Versioned> after = commitSealed(known, servers, config);
        known.clear();
        known.putAll(after);
      }
    } finally {
      waking = null;
    }
    calls.forEach(
        (id, call) -> {
          try {
            ControlReply reply =
                call.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (!reply.isOk()) {
              LOG.warn(
                  "{} refused to list its regions: {} {}", id, reply.status(), reply.message());
              return;
            }
            Map<Long, HeldRegion> regions = new HashMap<>();
            reply.regions().forEach(region -> regions.put(region.regionId(), region));
            held.put(id, regions);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } catch (ExecutionException e) {
            LOG.warn("cannot list the regions of {}: {}", id, e.getCause().getMessage());
          } catch (TimeoutException e) {
            LOG.warn("cannot list the regions of {}: no answer in time", id);
          }
        });
    return held;
  }

  /**
   * Whether {@code opening}'s members all hold its region now; false if some of its opens are still
   * on their way (a pass is asked for when they end).
   */
  private boolean opened(Opening opening) {
    if (!opening.tail.isDone()) {
      if (!opening.watched) {
        opening.watched = true;
        opening.tail.whenComplete(
            (accepted, failure) -> {
              if (!opening.superseded) {
                passWanted.run();
              }
            });
      }
      return false;
    }
    settle(opening);
    return opening.tail.getNow(false) && !opening.unlisted;
  }

  /**
   * Takes what a finished {@code opening} learnt into account, once (pass thread only). It stays
   * the region's last opening: a pass whose lists were asked before it was accepted finds it there
   * and sends nothing again (a split's daughters, opened as the pass began, were sent their opens
   * twice when it went here).
   */
  private void settle(Opening opening) {
    if (opening.settled) {
      return;
    }
    opening.settled = true;
    long stale = opening.staleEpoch.get();
    if (!opening.superseded && stale > 0) {
      epochFloor.merge(opening.region.id(), stale, Math::max);
    }
    if (!opening.superseded && !opening.notInSync.isEmpty()) {
      rejoin.put(
          opening.region.id(), new Refused(opening.region.epoch(), Set.copyOf(opening.notInSync)));
    }
  }

  /**
   * Tells {@code server} to close a region it holds as a stray, unless it is being told already.
   */
  private void close(ServerInfo server, ControlCommand.Close command) {
    String key = server.id() + "/" + command.regionId();
    if (!closing.add(key)) {
      return;
    }
    commands
        .send(server, command, options.controlTimeout())
        .whenComplete(
            (reply, failure) -> {
              closing.remove(key);
              if (failure != null) {
                LOG.warn("{} to {} failed: {}", command, server.id(), failure.getMessage());
              } else if (!reply.isOk()) {
                LOG.warn(
                    "{} refused {}: {} {}", server.id(), command, reply.status(), reply.message());
              }
            });
  }

  /**
   * The opens of one region's group at one epoch, sent member by member in the order given (each
   * once the previous one ended, whatever its outcome), concurrently with every other region's.
   */
  private final class Opening {
    final RegionDescriptor region;

    /** Whether every open sent was accepted; never completes exceptionally. */
    CompletableFuture<Boolean> tail = CompletableFuture.completedFuture(true);

    /** Some member was not listed this pass, so it was sent nothing (pass thread only). */
    boolean unlisted;

    /** A pass stopped waiting for it and asks for another when it ends (pass thread only). */
    boolean watched;

    /** What it learnt was taken into account ({@link #settle}; pass thread only). */
    boolean settled;

    /** The region moved on: nothing more is sent, and what the replies say is ignored. */
    volatile boolean superseded;

    /** The highest epoch a member said it is at when it refused an open as stale (0: none). */
    final AtomicLong staleEpoch = new AtomicLong();

    /** Members that refused an open in sync, holding no stream of the region. */
    final Set<String> notInSync = ConcurrentHashMap.newKeySet();

    /**
     * The opens being sent now (cancelled, and so dropped unsent if they still wait, on supersede).
     */
    final Set<CompletableFuture<ControlReply>> sending = ConcurrentHashMap.newKeySet();

    Opening(RegionDescriptor region) {
      this.region = region;
    }

    /** When every open sent was accepted (nanoTime; 0: not, or not yet). */
    volatile long acceptedAt;

    /** Records when the opens sent so far were all accepted, once they were. */
    void noteAccepted() {
      tail.thenAccept(
          accepted -> {
            if (accepted) {
              acceptedAt = System.nanoTime();
            }
          });
    }

    /** Whether every member was sent its open and accepted it after {@code nanos}. */
    boolean acceptedSince(long nanos) {
      return !unlisted && acceptedAt != 0 && acceptedAt - nanos > 0;
    }

    /** Whether these are the opens of {@code group}: the same members at the same epoch. */
    boolean opens(RegionDescriptor group) {
      return group.epoch() == region.epoch()
          && group.primary().equals(region.primary())
          && group.backups().equals(region.backups())
          && group.joining().equals(region.joining());
    }

    /** Sends {@code command} to {@code server} once the opens before it ended. */
    void then(ServerInfo server, ControlCommand command) {
      tail =
          tail.thenCompose(
              accepted ->
                  superseded
                      ? CompletableFuture.completedFuture(false)
                      : send(server, command).thenApply(ok -> accepted && ok));
    }

    /** Sends every one of {@code commands} at once, once the opens before them ended. */
    void thenAll(List<Map.Entry<ServerInfo, ControlCommand>> commands) {
      tail =
          tail.thenCompose(
              accepted -> {
                if (superseded) {
                  return CompletableFuture.completedFuture(false);
                }
                CompletableFuture<Boolean> all = CompletableFuture.completedFuture(accepted);
                for (Map.Entry<ServerInfo, ControlCommand> each : commands) {
                  all = all.thenCombine(send(each.getKey(), each.getValue()), (a, b) -> a && b);
                }
                return all;
              });
    }

    /** Sends {@code command} to {@code server} now, beside the opens sent before it. */
    void alongside(ServerInfo server, ControlCommand command) {
      if (superseded) {
        return;
      }
      tail = tail.thenCombine(send(server, command), (before, ok) -> before && ok);
    }

    void supersede() {
      superseded = true;
      sending.forEach(reply -> reply.cancel(false));
    }

    private CompletableFuture<Boolean> send(ServerInfo server, ControlCommand command) {
      CompletableFuture<ControlReply> reply =
          commands.send(server, command, options.controlTimeout());
      sending.add(reply);
      reply.whenComplete((answer, failure) -> sending.remove(reply));
      return reply.handle(
          (answer, failure) -> {
            if (failure != null) {
              if (!superseded) {
                LOG.warn("{} to {} failed: {}", command, server.id(), failure.getMessage());
              }
              return false;
            }
            if (!answer.isOk()) {
              LOG.warn(
                  "{} refused {}: {} {}", server.id(), command, answer.status(), answer.message());
              if (answer.status() == StatusCode.STALE_EPOCH
                  && answer.stats().containsKey(ControlReply.EPOCH)) {
                staleEpoch.accumulateAndGet(answer.stats().get(ControlReply.EPOCH), Math::max);
              }
              if (answer.stats().containsKey(ControlReply.REJOIN)) {
                notInSync.add(server.id());
              }
            }
            return answer.isOk();
          });
    }
  }
}
