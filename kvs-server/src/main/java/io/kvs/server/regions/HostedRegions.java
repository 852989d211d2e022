package io.kvs.server.regions;

import io.kvs.core.ClosedException;
import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.MergeOrigin;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.cluster.SplitOrigin;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.HeldRegion;
import io.kvs.core.control.StreamKey;
import io.kvs.engine.ContentsDigest;
import io.kvs.engine.Engine;
import io.kvs.engine.Region;
import io.kvs.engine.RegionStats;
import io.kvs.server.control.ControlledRegions;
import io.kvs.server.control.NotInSyncException;
import io.kvs.service.Promotion;
import io.kvs.service.RegionService;
import io.kvs.service.ReplicationStats;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The regions this server holds: opens them in the engine and attaches them to the request handler
 * at their epoch and role, as the master commands. Epochs only go up: a command with an epoch below
 * the highest this server accepted for the region (persisted) is refused with STALE_EPOCH.
 * Thread-safe: commands (open, close) on one region are serialized on that region's lock, and
 * commands on different regions run at once (the control server has several lanes, so a server that
 * is handed many regions at once, its peer having died, promotes them side by side); {@link
 * #closeAll} excludes every command. Reads ({@link #list}, {@link #stats}, {@link #regionStats},
 * {@link #digest}, {@link #samples}) take a published snapshot instead, so they never wait for a
 * command in progress.
 *
 * <p>A region whose engine region stopped (a compaction or a log failed with an I/O error, {@link
 * Region#stoppedBy}: it refuses writes for good) is left out of {@link #list}: the master then
 * takes it for lost here and moves its group on (a backup in sync is promoted if it was the
 * primary), and when it hands it back to this server as a backup, its data is dropped and copied
 * anew.
 */
public final class HostedRegions implements ControlledRegions {
  private static final Logger LOG = LoggerFactory.getLogger(HostedRegions.class);

  /**
   * A handover's preparation merges an in-memory level from this many key and value bytes: a new
   * primary replays fewer in a few milliseconds (about 200 MB/s in the elastic benchmark).
   */
  static final long HANDOVER_MERGE_FROM_BYTES = 4L << 20;

  /**
   * How long a handover's preparation waits for its merge at most; the handover goes ahead after it
   * either way (the master's wait for the reply is longer).
   */
  static final long HANDOVER_MERGE_WAIT_MILLIS = 2_000;

  private final String serverId;
  private final Engine engine;
  private final RegionService service;
  private final EpochStore epochs;
  private final Function<String, ServerInfo> servers;
  private final LongSupplier session;
  private final Map<Long, Hosted> hosted = new ConcurrentSkipListMap<>();

  /** Commands take it shared, each also its region's lock; {@link #closeAll} takes it alone. */
  private final ReentrantReadWriteLock commands = new ReentrantReadWriteLock();

  /** One lock per region id a command named: at most one per region of the cluster. */
  private final Map<Long, Object> regionLocks = new ConcurrentHashMap<>();

  /** Per region: the reason it stopped, last logged ({@link #list}). */
  private final Map<Long, String> reportedStops = new ConcurrentHashMap<>();

  /** Per region: the epoch and failed backups last logged ({@link #reportFailures}). */
  private final Map<Long, String> reportedFailures = new ConcurrentHashMap<>();

  // What the reads report, replaced after every change: a command that blocks (an open replaying a
  // long log, a close waiting for its backups) must not hold up the master's listing or the stats.
  private volatile Map<Long, Hosted> published = Map.of();

  /**
   * A region held here; {@code session}: the ZooKeeper session of this server when it was opened (0
   * if none was known), whose loss closes it ({@link #closeOpenedUnder}).
   */
  private record Hosted(
      RegionDescriptor descriptor,
      RegionRole role,
      Region region,
      ReplicationMode mode,
      long session) {}

  /**
   * @param servers looks a live server up by id (null if it is not live): where a primary finds its
   *     backups
   * @param session this server's ZooKeeper session id now (0 if none): the session each open is
   *     made under, which {@link #closeOpenedUnder} closes it for
   */
  public HostedRegions(
      String serverId,
      Engine engine,
      RegionService service,
      Path directory,
      Function<String, ServerInfo> servers,
      LongSupplier session) {
    this.session = session;
    this.serverId = serverId;
    this.servers = servers;
    this.engine = engine;
    this.service = service;
    this.epochs = new EpochStore(directory);
  }

  /** The engine region name of cluster region {@code regionId}. */
  public static String engineName(long regionId) {
    return "region-" + regionId;
  }

  /**
   * Opens {@code descriptor} in the role it gives this server (re-opening at a new epoch or role).
   * As primary, writes are refused while fewer than {@code minReplicas} replicas are in sync.
   * {@code streamKey} is the region's key at this epoch: as primary its replication streams prove
   * it, as backup it takes a stream only from the connection that did.
   *
   * @throws KvsException STALE_EPOCH for an epoch below one accepted before, INVALID_ARGUMENT if
   *     this server is no member of the region
   */
  @Override
  public void open(
      RegionDescriptor descriptor,
      ReplicationMode mode,
      int minReplicas,
      StreamKey streamKey,
      Map<String, ServerInfo> backups) {
    commands.readLock().lock();
    try {
      synchronized (lockOf(descriptor.id())) {
        try {
          openLocked(descriptor, mode, minReplicas, streamKey, backups);
        } finally {
          publish();
        }
      }
    } finally {
      commands.readLock().unlock();
    }
  }

  /**
   * Raises whose sync overlaps the making of a region from its parents: a thread each, at most one
   * per control lane (each waits for its own raise), idle ones ending after a minute.
   */
  private static final ExecutorService EPOCH_RAISES =
      Executors.newCachedThreadPool(
          runnable -> {
            Thread thread = new Thread(runnable, "kvs-epoch-raise");
            thread.setDaemon(true);
            return thread;
          });

  /** Waits for {@code raising}; its failure is thrown as the raise's own. */
  private static void awaitRaise(CompletableFuture<Void> raising) {
    try {
      raising.join();
    } catch (java.util.concurrent.CompletionException e) {
      if (e.getCause() instanceof RuntimeException cause) {
        throw cause;
      }
      throw e;
    }
  }

  private static long millis(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }

  private Object lockOf(long regionId) {
    return regionLocks.computeIfAbsent(regionId, id -> new Object());
  }

  /**
   * Publishes what is held now for the reads. Copy and store under one lock, so that the last
   * publication, made after every change before it, is what stays.
   */
  private void publish() {
    synchronized (regionLocks) {
      published = Map.copyOf(hosted);
    }
  }

  private void openLocked(
      RegionDescriptor descriptor,
      ReplicationMode mode,
      int minReplicas,
      StreamKey streamKey,
      Map<String, ServerInfo> registered) {
    RegionRole role = descriptor.roleOf(serverId);
    if (role == null) {
      throw KvsException.of(
          StatusCode.INVALID_ARGUMENT,
          "server " + serverId + " is not a member of region " + descriptor.id());
    }
    long began = System.nanoTime();
    fence(descriptor.id(), descriptor.epoch());
    refuseInSyncWithoutStream(descriptor, role, mode);
    List<RegionService.Backup> backups =
        role == RegionRole.PRIMARY && mode.replicates()
            ? backupEndpoints(descriptor, registered)
            : List.of();
    // A region made from its parents here: the raise's sync and the making overlap (a daughter's
    // primary waited 14-20 ms for each under the elastic benchmark's load). At the region's first
    // epoch here the sync ends after the region is served, before the open is answered: its id is
    // new (never reused) and it is born at this epoch, so no command at a lower one exists that a
    // restart before the sync could let in (the sync took 15-52 ms of a daughter's 60 ms open under
    // the elastic benchmark's load); a later epoch's raise is on disk before it is served.
    boolean firstEpoch = epochs.highest(descriptor.id()) < 0;
    long checked = System.nanoTime();
    CompletableFuture<Void> raising =
        descriptor.origin() != null && !hosted.containsKey(descriptor.id())
            ? CompletableFuture.runAsync(
                () -> epochs.raise(descriptor.id(), descriptor.epoch()), EPOCH_RAISES)
            : null;
    if (raising == null) {
      epochs.raise(descriptor.id(), descriptor.epoch());
    }
    long raised = System.nanoTime();
    splitParent(descriptor);
    mergeParents(descriptor);
    long madeAt = System.nanoTime();
    boolean servedBeforeStored = raising != null && firstEpoch;
    if (raising != null && !servedBeforeStored) {
      awaitRaise(raising);
    }
    long made = System.nanoTime();
    // The raise's time, beyond the making's when they overlap.
    long storing = (raised - checked) + (made - madeAt);
    long making = madeAt - raised;
    Hosted current = hosted.get(descriptor.id());
    Region region = regionFor(descriptor, role, mode, current);
    long found = System.nanoTime();
    try {
      service.attach(
          descriptor.id(),
          descriptor.epoch(),
          region,
          role == RegionRole.PRIMARY,
          descriptor.start(),
          descriptor.end(),
          backups,
          mode,
          minReplicas,
          descriptor.primary(),
          descriptor.joining().contains(serverId),
          streamKey.bytes());
    } catch (KvsException e) {
      // Refused, nothing changed (a backup whose stream was cut here, opened in sync): a region
      // object opened for it goes; the master, finding it not held, opens it joining.
      if (current == null || region != current.region()) {
        region.close();
      }
      throw e;
    }
    hosted.put(descriptor.id(), new Hosted(descriptor, role, region, mode, session.getAsLong()));
    if (role == RegionRole.PRIMARY) {
      takeOverParents(descriptor);
    }
    long attached = System.nanoTime();
    if (servedBeforeStored) {
      try {
        awaitRaise(raising);
      } catch (RuntimeException e) {
        // Not answered as opened: the master finds it not held and opens it again.
        hosted.remove(descriptor.id());
        service.detach(descriptor.id());
        throw e;
      }
      storing += System.nanoTime() - attached;
    }
    LOG.info(
        "opened {} as {} ({}) in {} ms (checks {}, epoch stored {}, made from its parents {}, engine"
            + " region {}, attached {})",
        descriptor,
        role,
        mode.configName(),
        millis(attached - began),
        millis(checked - began),
        millis(storing),
        millis(making),
        millis(found - made),
        millis(attached - found));
  }

  /**
   * Stops serving region {@code regionId}; its data stays in the engine.
   *
   * @throws KvsException STALE_EPOCH for an epoch below the one held
   */
  @Override
  public void close(long regionId, long epoch) {
    commands.readLock().lock();
    try {
      synchronized (lockOf(regionId)) {
        fence(regionId, epoch);
        epochs.raise(regionId, epoch);
        if (hosted.remove(regionId) != null) {
          publish();
          long detaching = System.nanoTime();
          service.detach(regionId); // a primary hands its last records to the backups first
          LOG.info(
              "closed region {} at epoch {} (detached in {} ms)",
              regionId,
              epoch,
              millis(System.nanoTime() - detaching));
        }
      }
    } finally {
      commands.readLock().unlock();
    }
  }

  /**
   * Seals region {@code regionId} for its split: refused unless this server leads it at {@code
   * epoch}; picks the split key (the given one, or the middle of the region by size: {@link
   * SplitKeys#middle}), then stops serving it once its last records reached every backup. The
   * region's data stays, for the split each member makes of it when it opens a daughter; without
   * the master's commit the region is opened again (the master finds it not held).
   *
   * @throws KvsException STALE_EPOCH or NOT_PRIMARY if not led here at {@code epoch};
   *     INVALID_ARGUMENT for a key not strictly inside the region; the hand-over's error if a
   *     backup missed records
   */
  @Override
  public byte[] seal(long regionId, long epoch, byte[] key, boolean byLoad) {
    commands.readLock().lock();
    try {
      synchronized (lockOf(regionId)) {
        Hosted current = ledAt(regionId, epoch);
        RegionDescriptor descriptor = current.descriptor();
        long picking = System.nanoTime();
        byte[] splitKey =
            key.length > 0
                ? key
                : byLoad ? SplitKeys.byLoad(current.region()) : SplitKeys.middle(current.region());
        if (splitKey == null || !descriptor.splitsAt(splitKey)) {
          throw KvsException.of(
              StatusCode.INVALID_ARGUMENT,
              splitKey == null
                  ? "region " + regionId + " holds too few keys to split"
                  : "split key " + Keys.print(splitKey) + " is not inside " + descriptor);
        }
        long detaching = System.nanoTime();
        hosted.remove(regionId);
        publish();
        // Its requests from here on wait for its daughters (run in them once opened here).
        service.detachSealed(regionId, RegionService.SEALED_HOLD);
        LOG.info(
            "sealed {} for its split at {} (key picked in {} ms while it served, detached in {} ms)",
            descriptor,
            Keys.print(splitKey),
            millis(detaching - picking),
            millis(System.nanoTime() - detaching));
        return splitKey;
      }
    } finally {
      commands.readLock().unlock();
    }
  }

  /** The highest epoch this server accepted for {@code regionId} (0: none), held or not. */
  @Override
  public long highestEpoch(long regionId) {
    return epochs.highest(regionId);
  }

  /**
   * A region held now, for the metrics: its role, its backups (server ids, placement order) and its
   * engine region (which a command may close meanwhile: reading it may then throw).
   */
  public record Sample(long regionId, RegionRole role, List<String> backups, Region region) {}

  /** What this server holds now, without waiting for a command in progress (metrics). */
  public List<Sample> samples() {
    List<Sample> samples = new ArrayList<>();
    published.forEach(
        (id, region) ->
            samples.add(
                new Sample(id, region.role(), region.descriptor().backups(), region.region())));
    return samples;
  }

  /** What this server holds now. */
  @Override
  public List<HeldRegion> list() {
    List<HeldRegion> held = new ArrayList<>();
    new TreeMap<>(published)
        .forEach(
            (id, region) -> {
              if (stopped(id, region)) {
                return; // lost here: the master moves the group on
              }
              if (region.role() != RegionRole.PRIMARY) {
                held.add(new HeldRegion(id, region.descriptor().epoch(), region.role()));
                return;
              }
              List<String> backups = region.descriptor().backups();
              List<RegionService.BackupState> states =
                  backups.isEmpty() || !region.mode().replicates()
                      ? List.of()
                      : service.backupStates(id);
              List<String> inSync = new ArrayList<>();
              List<String> failed = new ArrayList<>();
              for (int i = 0; i < Math.min(backups.size(), states.size()); i++) {
                if (states.get(i) == RegionService.BackupState.IN_SYNC) {
                  inSync.add(backups.get(i));
                } else if (states.get(i) == RegionService.BackupState.FAILED) {
                  failed.add(backups.get(i));
                }
              }
              reportFailures(id, region.descriptor().epoch(), backups, failed);
              boolean known = states.size() == backups.size() || !region.mode().replicates();
              RegionStats stats = statsOf(region);
              held.add(
                  new HeldRegion(
                      id,
                      region.descriptor().epoch(),
                      region.role(),
                      known && inSync.size() == states.size(),
                      !failed.isEmpty(),
                      inSync,
                      failed,
                      stats == null ? 0 : stats.puts() + stats.deletes() + stats.gets(),
                      region.descriptor().joining(),
                      stats == null ? 0 : stats.levelKvBytes() + stats.l0KvBytes()));
            });
    return held;
  }

  /** {@code region}'s engine statistics (null if it closed meanwhile). */
  private static RegionStats statsOf(Hosted region) {
    try {
      return region.region().stats();
    } catch (ClosedException e) {
      return null; // replaced meanwhile
    }
  }

  /**
   * Whether {@code region}'s engine region stopped for good (logged once per reason): it is then
   * not listed, so the master takes it for lost here.
   */
  private boolean stopped(long id, Hosted region) {
    Optional<String> why;
    try {
      why = region.region().stoppedBy();
    } catch (ClosedException e) {
      return false; // replaced meanwhile: the next list looks at its successor
    }
    if (why.isEmpty()) {
      reportedStops.remove(id);
      return false;
    }
    if (!why.get().equals(reportedStops.put(id, why.get()))) {
      LOG.error(
          "region {} stopped here and is no longer listed, so that the master moves it on: {}",
          id,
          why.get());
    }
    return true;
  }

  /**
   * Logs why the streams to {@code failed} backups broke, once per region, epoch and set of failed
   * backups (the master asks every pass; it repairs them by reopening the region).
   */
  private void reportFailures(long id, long epoch, List<String> backups, List<String> failed) {
    if (failed.isEmpty()) {
      reportedFailures.remove(id);
      return;
    }
    String key = epoch + " " + failed;
    if (key.equals(reportedFailures.put(id, key))) return;
    for (String backup : failed) {
      String why = service.backupFailure(id, backups.indexOf(backup)).orElse("(no reason kept)");
      LOG.warn("region {} at epoch {}: {}", id, epoch, why);
    }
  }

  /**
   * This server's counters: its replication statistics ({@link RegionService#replicationStats()})
   * and its regions' engine statistics summed by role ({@code primary.*}, {@code backup.*}).
   */
  @Override
  public Map<String, Long> stats() {
    Map<String, Long> stats = new TreeMap<>();
    ReplicationStats replication = service.replicationStats();
    stats.put("replication.logBytes", replication.logBytes());
    stats.put("replication.indexBytes", replication.indexBytes());
    stats.put("replication.writes", replication.writes());
    stats.put("replication.batches", replication.batches());
    stats.put("replication.flushes", replication.flushes());
    stats.put("replication.indexMessages", replication.indexMessages());
    stats.put("replication.indexShipCpuNanos", replication.indexShipCpuNanos());
    stats.put("replication.backupTailBytes", replication.backupTailBytes());
    stats.put("replication.backupSegments", replication.backupSegments());
    stats.put("replication.backupLevels", replication.backupLevels());
    stats.put("replication.backupLogCpuNanos", replication.backupLogCpuNanos());
    stats.put("replication.backupIndexCpuNanos", replication.backupIndexCpuNanos());
    stats.put("service.insertCpuNanos", replication.insertCpuNanos());
    for (Hosted region : published.values()) {
      String role = region.role() == RegionRole.PRIMARY ? "primary." : "backup.";
      RegionStats engineStats;
      try {
        engineStats = region.region().stats();
      } catch (ClosedException e) {
        continue; // replaced meanwhile (promoted, or dropped to become a replica): asked next time
      }
      stats.merge(role + "regions", 1L, Long::sum);
      stats.merge(role + "l0Bytes", engineStats.l0Bytes(), Long::sum);
      stats.merge(role + "puts", engineStats.puts() + engineStats.deletes(), Long::sum);
      stats.merge(role + "compactions", engineStats.compactions(), Long::sum);
      stats.merge(role + "compactionBytesWritten", engineStats.compactionBytesWritten(), Long::sum);
      stats.merge(role + "compactionBytesRead", engineStats.compactionBytesRead(), Long::sum);
      stats.merge(
          role + "logBytes", engineStats.smallLogBytes() + engineStats.largeLogBytes(), Long::sum);
      stats.merge(role + "stalls", engineStats.stalls(), Long::sum);
      stats.merge(role + "stallMicros", engineStats.stallMicros(), Long::sum);
    }
    return stats;
  }

  /**
   * Region {@code regionId}'s counters here, as {@link
   * io.kvs.core.control.ControlCommand.RegionStats} describes them.
   *
   * @throws KvsException NOT_FOUND for a region not held here
   */
  @Override
  public Map<String, Long> regionStats(long regionId) {
    Hosted region = published.get(regionId);
    if (region == null) {
      throw KvsException.of(StatusCode.NOT_FOUND, "region " + regionId + " is not held here");
    }
    RegionStats engineStats = region.region().stats();
    Map<String, Long> stats = new TreeMap<>();
    stats.put("epoch", region.descriptor().epoch());
    stats.put("primary", region.role() == RegionRole.PRIMARY ? 1L : 0L);
    stats.put("puts", engineStats.puts());
    stats.put("deletes", engineStats.deletes());
    stats.put("gets", engineStats.gets());
    stats.put("l0Bytes", engineStats.l0Bytes());
    stats.put("l0KvBytes", engineStats.l0KvBytes());
    stats.put("l0Entries", engineStats.l0Entries());
    stats.put("stalls", engineStats.stalls());
    stats.put("smallLogBytes", engineStats.smallLogBytes());
    stats.put("largeLogBytes", engineStats.largeLogBytes());
    stats.put("lastLsn", engineStats.lastLsn());
    stats.put("compactions", engineStats.compactions());
    stats.put("compactionBytesWritten", engineStats.compactionBytesWritten());
    stats.put("levelCount", engineStats.levelCount());
    stats.put("levelKvBytes", engineStats.levelKvBytes());
    stats.put("largeGarbageBytes", engineStats.largeGarbageBytes());
    return stats;
  }

  /**
   * A digest of what region {@code regionId} serves here, as {@link
   * io.kvs.core.control.ControlCommand.Digest} describes it: a backup's is of what it would serve
   * if it were promoted now (under send-index its installed levels with its log copies' records
   * past them; under build-index its own region with the records its stream holds beyond it); any
   * other replica's, of what its region serves (a full scan of its in-memory and device levels).
   * Taken outside this object's lock.
   *
   * @throws KvsException NOT_FOUND for a region not held here
   */
  @Override
  public Map<String, Long> digest(long regionId) {
    Hosted region = published.get(regionId);
    if (region == null) {
      throw KvsException.of(StatusCode.NOT_FOUND, "region " + regionId + " is not held here");
    }
    boolean backup = region.role() != RegionRole.PRIMARY && region.mode().replicates();
    ContentsDigest digest =
        backup ? service.replicaDigest(regionId) : region.region().contentsDigest();
    Map<String, Long> reply = new TreeMap<>(digest.asMap());
    reply.put(
        "scope",
        !backup
            ? ControlCommand.DIGEST_SERVED
            : region.mode() == ReplicationMode.SEND_INDEX
                ? ControlCommand.DIGEST_SEND_INDEX_BACKUP
                : ControlCommand.DIGEST_BUILD_INDEX_BACKUP);
    return reply;
  }

  /** The engine region behind cluster region {@code regionId}, if held (tests, tools). */
  public Region engineRegion(long regionId) {
    Hosted region = hosted.get(regionId);
    return region == null ? null : region.region();
  }

  /** Detaches everything and makes every region's writes durable. */
  public void closeAll() {
    closeWhere(region -> true);
  }

  /**
   * Detaches, as {@link #closeAll} does, the regions opened under ZooKeeper session {@code lost}
   * (or under no known session), and returns how many: the master has moved on from that session. A
   * region the master opened here again under a later session stays: when the session's loss is
   * acted on after this server registered anew (Curator re-creates its node at once), the master
   * may already have opened regions on it, and closing them too made the master's next epoch count
   * a backup in sync whose region had been closed and opened again under its primary's stream.
   */
  public int closeOpenedUnder(long lost) {
    return closeWhere(region -> region.session() == lost || region.session() == 0);
  }

  private int closeWhere(Predicate<Hosted> which) {
    commands.writeLock().lock();
    try {
      Map<Long, Hosted> staying = new TreeMap<>(hosted);
      staying.values().removeIf(which);
      synchronized (regionLocks) {
        published = Map.copyOf(staying); // no read finds a region being closed
      }
      int closed = 0;
      for (Map.Entry<Long, Hosted> entry : hosted.entrySet()) {
        if (!which.test(entry.getValue())) {
          continue;
        }
        service.detach(entry.getKey());
        entry.getValue().region().sync();
        hosted.remove(entry.getKey());
        closed++;
      }
      return closed;
    } finally {
      commands.writeLock().unlock();
    }
  }

  /**
   * Where {@code descriptor}'s backups take its streams: their registrations as the master's open
   * carried them (read for the pass that sent it, from which the master reached each of them), else
   * as ZooKeeper has them now (a read per backup, 6-25 ms of a daughter's open on its primary under
   * the elastic benchmark's load when every open looked them up).
   */
  private List<RegionService.Backup> backupEndpoints(
      RegionDescriptor descriptor, Map<String, ServerInfo> registered) {
    List<RegionService.Backup> endpoints = new ArrayList<>();
    for (String backup : descriptor.backups()) {
      ServerInfo info = registered.get(backup);
      info = info != null && info.id().equals(backup) ? info : servers.apply(backup);
      if (info == null) {
        throw KvsException.of(
            StatusCode.IO_ERROR,
            "region " + descriptor.id() + ": backup " + backup + " is not a live server");
      }
      if (!info.hasFabric()) {
        throw KvsException.of(
            StatusCode.INVALID_ARGUMENT,
            "region "
                + descriptor.id()
                + ": backup "
                + backup
                + " serves no fabric transport, which replication needs");
      }
      endpoints.add(
          new RegionService.Backup(
              InetSocketAddress.createUnresolved(info.host(), info.fabricPort()),
              descriptor.joining().contains(backup)));
    }
    return endpoints;
  }

  /**
   * Refuses to open {@code descriptor} as a backup in sync (send-index, not joining) unless this
   * process holds the region's stream already, or the region is being created (its first epoch,
   * never seen here, no replica on disk). A replica this process did not receive (one a process
   * killed before it left on disk, or one this server closed or whose engine region stopped) may
   * lack acknowledged writes that had landed only in memory, and a backup in sync may be promoted:
   * a power cut, with the master sending a dead backup's open again to its restarted process, once
   * promoted such a replica and lost acknowledged writes. The master opens it joining instead.
   */
  private void refuseInSyncWithoutStream(
      RegionDescriptor descriptor, RegionRole role, ReplicationMode mode) {
    if (role != RegionRole.BACKUP
        || mode != ReplicationMode.SEND_INDEX
        || descriptor.joining().contains(serverId)) {
      return;
    }
    Hosted current = hosted.get(descriptor.id());
    if (current != null && current.region().stoppedBy().isEmpty()) {
      return;
    }
    boolean created =
        descriptor.epoch() == 1
            && epochs.highest(descriptor.id()) <= 0
            && !service.holdsReplica(engineName(descriptor.id()));
    if (!created) {
      throw new NotInSyncException(
          "region "
              + descriptor.id()
              + ": "
              + serverId
              + " holds no replication stream of it (restarted, closed or stopped since), so it"
              + " cannot be its backup in sync at epoch "
              + descriptor.epoch()
              + "; open it joining");
    }
  }

  private void fence(long regionId, long epoch) {
    long highest = epochs.highest(regionId);
    if (epoch < highest) {
      throw KvsException.of(
          StatusCode.STALE_EPOCH,
          "region " + regionId + " is at epoch " + highest + " here, not " + epoch);
    }
  }

  /**
   * The engine region to serve {@code regionId} from in {@code role}. Under send-index a backup's
   * region holds a replica (its primary's levels and log copies, which the stream ships from
   * nothing), and a primary's its own data: a replica becomes a primary's by promotion, and a
   * region with data of its own (this server was its primary before) is dropped to become a
   * replica, since the group's data is its live members', not this server's older state.
   */
  private Region regionFor(
      RegionDescriptor descriptor, RegionRole role, ReplicationMode mode, Hosted current) {
    long regionId = descriptor.id();
    String name = engineName(regionId);
    Optional<String> stopped = current == null ? Optional.empty() : current.region().stoppedBy();
    if (stopped.isPresent()) {
      if (role == RegionRole.PRIMARY) {
        throw KvsException.of(
            StatusCode.IO_ERROR,
            "region " + regionId + " stopped here and cannot be its primary: " + stopped.get());
      }
      hosted.remove(regionId);
      service.detach(regionId);
      engine.dropRegion(name);
      LOG.warn("dropped the stopped region {} to hold it anew as a backup", regionId);
      current = null;
    }
    if (mode != ReplicationMode.SEND_INDEX) {
      return current != null ? current.region() : openOrCreate(regionId);
    }
    boolean replica = service.holdsReplica(name);
    if (role == RegionRole.PRIMARY && replica) {
      long started = System.nanoTime();
      if (current != null) {
        hosted.remove(regionId);
      }
      Promotion promoted =
          service.promote(regionId, engine, name, descriptor.start(), descriptor.end());
      LOG.info(
          "promoted the replica of region {} in {} ms: {}",
          regionId,
          (System.nanoTime() - started) / 1_000_000,
          promoted);
      return promoted.region();
    }
    if (role == RegionRole.BACKUP && !replica) {
      if (current != null) {
        hosted.remove(regionId);
        service.detach(regionId);
      }
      try {
        engine.dropRegion(name);
        LOG.info("dropped this server's own data of region {} to hold it as a backup", regionId);
      } catch (KvsException e) {
        if (e.status() != StatusCode.NOT_FOUND) {
          throw e;
        }
      }
      return engine.createRegion(name);
    }
    return current != null ? current.region() : openOrCreate(regionId);
  }

  /**
   * For a daughter of a split this server does not hold yet: splits its copy of the parent (engine
   * region {@code region-<parent>}) into both daughters, as the engine splits (no copy,
   * crash-safe). A send-index backup's copy of the parent is a replica, split the same way: the
   * daughters' streams resume from it, shipping the logs' end records the primary's split wrote
   * (the master opens them with every backup joining until then). Nothing to do if the daughter
   * exists here or the parent does not (this server lost it: the usual rules apply). Called under
   * the daughter's lock; takes the parent's (daughters' ids are above their parent's, so the order
   * never cycles).
   */
  private void splitParent(RegionDescriptor descriptor) {
    if (!(descriptor.origin() instanceof SplitOrigin origin)
        || exists(engineName(descriptor.id()))) {
      return;
    }
    long parentId = origin.parent();
    String parent = engineName(parentId);
    long asked = System.nanoTime();
    synchronized (lockOf(parentId)) {
      long locked = System.nanoTime();
      if (!exists(parent)) {
        return;
      }
      if (hosted.remove(parentId) != null) {
        publish();
      }
      service.detach(parentId); // a backup applies what its buffers hold first
      boolean replica = service.holdsReplica(parent);
      long lower = Math.min(descriptor.id(), origin.sibling());
      long upper = Math.max(descriptor.id(), origin.sibling());
      long began = System.nanoTime();
      engine.splitRegion(parent, descriptor.splitKey(), engineName(lower), engineName(upper));
      LOG.info(
          "split {}region {} at {} into {} and {} in {} ms (the parent's lock waited for {} ms,"
              + " its detach {} ms)",
          replica ? "the replica of " : "",
          parentId,
          Keys.print(descriptor.splitKey()),
          lower,
          upper,
          millis(System.nanoTime() - began),
          millis(locked - asked),
          millis(began - locked));
    }
  }

  /**
   * A split's daughter or a merged region led here takes the client requests still addressed to its
   * parents (clients whose map has not seen the change yet; those held since the seal): {@link
   * RegionService#takeOver}.
   */
  private void takeOverParents(RegionDescriptor descriptor) {
    if (descriptor.origin() instanceof SplitOrigin origin) {
      service.takeOver(descriptor.id(), origin.parent());
    } else if (descriptor.origin() instanceof MergeOrigin origin) {
      service.takeOver(descriptor.id(), origin.left(), origin.right());
    }
  }

  /**
   * Retires region {@code regionId} for its merge with a neighbour: refused unless this server
   * leads it at {@code epoch}; stops serving it once its last records reached every backup. Its
   * data stays, for the merge each member makes when it opens the merged region; without the
   * master's commit the region is opened again (the master finds it not held).
   *
   * @throws KvsException STALE_EPOCH or NOT_PRIMARY if not led here at {@code epoch}; the
   *     hand-over's error if a backup missed records
   */
  @Override
  public void retire(long regionId, long epoch) {
    commands.readLock().lock();
    try {
      synchronized (lockOf(regionId)) {
        RegionDescriptor descriptor = ledAt(regionId, epoch).descriptor();
        hosted.remove(regionId);
        publish();
        // Its requests from here on wait for the merged region (run in it once opened here).
        service.detachSealed(regionId, RegionService.SEALED_HOLD);
        LOG.info("retired {} for its merge", descriptor);
      }
    } finally {
      commands.readLock().unlock();
    }
  }

  /**
   * Prepares region {@code regionId} for a handover of its leadership: refused unless this server
   * leads it at {@code epoch}; merges its in-memory level into its levels while it serves (at most
   * {@link #HANDOVER_MERGE_WAIT_MILLIS}) if it holds at least {@link #HANDOVER_MERGE_FROM_BYTES}.
   * Under send-index the merge ships the index to the backups, so the one promoted replays only the
   * writes made since. Merged outside the region's lock: a close or an open meanwhile waits for
   * nothing but the native call (its close at most for the bound).
   *
   * @return the counters {@code merged} (1 if every write before the call is merged) and {@code
   *     l0Bytes} (what the in-memory level held)
   * @throws KvsException STALE_EPOCH or NOT_PRIMARY if not led here at {@code epoch}
   */
  @Override
  public Map<String, Long> prepareHandover(long regionId, long epoch) {
    Region region;
    commands.readLock().lock();
    try {
      synchronized (lockOf(regionId)) {
        region = ledAt(regionId, epoch).region();
      }
    } finally {
      commands.readLock().unlock();
    }
    long l0Bytes = region.stats().l0KvBytes();
    if (l0Bytes < HANDOVER_MERGE_FROM_BYTES) {
      return Map.of("merged", 1L, "l0Bytes", l0Bytes); // replayed in a few milliseconds
    }
    long began = System.nanoTime();
    boolean merged = region.mergeAhead(HANDOVER_MERGE_WAIT_MILLIS);
    LOG.info(
        "region {}: merged {} KiB ahead of its handover in {} ms{}",
        regionId,
        l0Bytes >> 10,
        millis(System.nanoTime() - began),
        merged ? "" : " (not finished: it goes on)");
    return Map.of("merged", merged ? 1L : 0L, "l0Bytes", l0Bytes);
  }

  /** Region {@code regionId} as held here, led at {@code epoch}; else STALE_EPOCH, NOT_PRIMARY. */
  private Hosted ledAt(long regionId, long epoch) {
    Hosted current = hosted.get(regionId);
    if (current == null || current.descriptor().epoch() != epoch) {
      throw KvsException.of(
          StatusCode.STALE_EPOCH, "region " + regionId + " is not held here at epoch " + epoch);
    }
    if (current.role() != RegionRole.PRIMARY) {
      throw KvsException.of(
          StatusCode.NOT_PRIMARY, "region " + regionId + " is not led by " + serverId);
    }
    return current;
  }

  /**
   * For a region merged from two that this server does not hold yet (or holds half made: a merge a
   * crash interrupted): makes it from its copies of both, by copying their pairs into a new engine
   * region, syncing it, then dropping the lower region (the merge's commit point here: a merged
   * region beside its lower region is half made, and made again) and the upper one. The regions
   * merged are small (below {@code --merge-size}), so the copy is short. A send-index backup's
   * copies are replicas, which are not copied: dropped, the merged region is re-replicated from its
   * primary (the master opens it with every backup joining); a merged region held as such a replica
   * was received, never half made (copies of both found beside it are strays, dropped). Nothing to
   * do if this server lost either (the usual rules apply: it joins). Called under the merged
   * region's lock; takes both others' (their ids are below it, so the order never cycles).
   */
  private void mergeParents(RegionDescriptor descriptor) {
    if (!(descriptor.origin() instanceof MergeOrigin origin)) {
      return;
    }
    String merged = engineName(descriptor.id());
    String left = engineName(origin.left());
    String right = engineName(origin.right());
    synchronized (lockOf(origin.left())) {
      synchronized (lockOf(origin.right())) {
        if (exists(merged) && (!exists(left) || service.holdsReplica(merged))) {
          // Made already (a crash came after the commit point here), or received from its
          // primary as a replica: copies of both left here are strays, dropped.
          for (String stray : List.of(left, right)) {
            if (exists(stray)) {
              engine.dropRegion(stray);
            }
          }
          return;
        }
        if (!exists(left) || !exists(right)) {
          return;
        }
        for (long id : List.of(origin.left(), origin.right())) {
          if (hosted.remove(id) != null) {
            publish();
          }
          service.detach(id); // a backup applies what its buffers hold first
        }
        if (service.holdsReplica(left) || service.holdsReplica(right)) {
          engine.dropRegion(left);
          engine.dropRegion(right);
          LOG.info(
              "dropped the replicas of regions {} and {}: their merge {} is re-replicated",
              origin.left(),
              origin.right(),
              descriptor.id());
          return;
        }
        long began = System.nanoTime();
        long[] pairs = new long[1];
        RegionCopy.merge(engine, left, right, merged, this::exists, pairs);
        LOG.info(
            "merged regions {} and {} into {} ({} pairs) in {} ms",
            origin.left(),
            origin.right(),
            descriptor.id(),
            pairs[0],
            millis(System.nanoTime() - began));
      }
    }
  }

  private boolean exists(String name) {
    try {
      engine.openRegion(name);
      return true;
    } catch (KvsException e) {
      if (e.status() != StatusCode.NOT_FOUND) {
        throw e;
      }
      return false;
    }
  }

  private Region openOrCreate(long regionId) {
    String name = engineName(regionId);
    try {
      return engine.openRegion(name);
    } catch (KvsException e) {
      if (e.status() != StatusCode.NOT_FOUND) {
        throw e;
      }
      return engine.createRegion(name);
    }
  }
}
