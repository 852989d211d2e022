package io.kvs.bench.scale;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.HeldRegion;
import io.kvs.core.control.StreamKey;
import io.kvs.server.control.ControlledRegions;
import io.kvs.server.control.NotInSyncException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The regions a simulated server holds, answering the control RPC's commands by the rules a real
 * server's {@code HostedRegions} follows, without an engine: epochs only go up (STALE_EPOCH below
 * the highest accepted), an open names the receiver's role, a send-index backup in sync is refused
 * ({@link NotInSyncException}, so the master opens it joining) unless it holds the region already
 * or the region is being created. As primary it reports how its backups stand as a real primary's
 * replication would: a backup in sync once it holds the region at this epoch (a joining one after
 * {@link SimulatedCluster#catchUp()} more), failed once its server died. Thread-safe: one region's
 * commands are serialised on its entry, reads take a snapshot.
 */
final class SimulatedRegions implements ControlledRegions {
  /** A region held here: as opened, and when (nanoTime), for the catch-up of joining backups. */
  record Held(RegionDescriptor descriptor, RegionRole role, long openedAt) {}

  private final String serverId;
  private final SimulatedCluster cluster;
  private final Map<Long, Held> held = new ConcurrentHashMap<>();
  private final Map<Long, Long> highestEpochs = new ConcurrentHashMap<>();

  SimulatedRegions(String serverId, SimulatedCluster cluster) {
    this.serverId = serverId;
    this.cluster = cluster;
  }

  @Override
  public void open(
      RegionDescriptor descriptor,
      ReplicationMode mode,
      int minReplicas,
      StreamKey streamKey,
      Map<String, ServerInfo> backups) {
    RegionRole role = descriptor.roleOf(serverId);
    if (role == null) {
      throw KvsException.of(
          StatusCode.INVALID_ARGUMENT,
          "server " + serverId + " is not a member of region " + descriptor.id());
    }
    synchronized (lockOf(descriptor.id())) {
      fence(descriptor.id(), descriptor.epoch());
      if (role == RegionRole.BACKUP
          && mode == ReplicationMode.SEND_INDEX
          && !descriptor.joining().contains(serverId)
          && !held.containsKey(descriptor.id())
          && !(descriptor.epoch() == 1 && highestEpoch(descriptor.id()) <= 0)) {
        throw new NotInSyncException(
            "region " + descriptor.id() + ": " + serverId + " holds no replication stream of it");
      }
      highestEpochs.merge(descriptor.id(), descriptor.epoch(), Math::max);
      Held before = held.get(descriptor.id());
      // A backup staying in sync under the same primary keeps its stream (and so its in-sync
      // state) across epochs, as a real one does; anything else starts its catch-up now.
      long openedAt =
          before != null
                  && before.role() == role
                  && before.descriptor().primary().equals(descriptor.primary())
                  && !descriptor.joining().contains(serverId)
              ? before.openedAt()
              : System.nanoTime();
      held.put(descriptor.id(), new Held(descriptor, role, openedAt));
    }
  }

  @Override
  public void close(long regionId, long epoch) {
    synchronized (lockOf(regionId)) {
      fence(regionId, epoch);
      highestEpochs.merge(regionId, epoch, Math::max);
      held.remove(regionId);
    }
  }

  @Override
  public byte[] seal(long regionId, long epoch, byte[] key, boolean byLoad) {
    throw KvsException.of(
        StatusCode.INVALID_ARGUMENT, "a simulated server holds no keys: it cannot split");
  }

  @Override
  public void retire(long regionId, long epoch) {
    throw KvsException.of(
        StatusCode.INVALID_ARGUMENT, "a simulated server holds no data: it cannot merge");
  }

  @Override
  public Map<String, Long> prepareHandover(long regionId, long epoch) {
    Held region = held.get(regionId);
    if (region == null || region.descriptor().epoch() != epoch) {
      throw KvsException.of(
          StatusCode.STALE_EPOCH, "region " + regionId + " is not held here at epoch " + epoch);
    }
    if (region.role() != RegionRole.PRIMARY) {
      throw KvsException.of(
          StatusCode.NOT_PRIMARY, "region " + regionId + " is not led by " + serverId);
    }
    return Map.of("merged", 1L, "l0Bytes", 0L); // no data: nothing to merge
  }

  @Override
  public long highestEpoch(long regionId) {
    return highestEpochs.getOrDefault(regionId, 0L);
  }

  /** What this server holds now, {@code id -> held}, for its peers' replication state. */
  Held holding(long regionId) {
    return held.get(regionId);
  }

  /** How many regions it holds. */
  int size() {
    return held.size();
  }

  /** Forgets every region and epoch: a server that restarted with an empty disk. */
  void clear() {
    held.clear();
    highestEpochs.clear();
  }

  @Override
  public List<HeldRegion> list() {
    List<HeldRegion> regions = new ArrayList<>(held.size());
    long now = System.nanoTime();
    for (Held region : new TreeMap<>(held).values()) {
      RegionDescriptor descriptor = region.descriptor();
      if (region.role() != RegionRole.PRIMARY) {
        regions.add(new HeldRegion(descriptor.id(), descriptor.epoch(), region.role()));
        continue;
      }
      List<String> inSync = new ArrayList<>();
      List<String> failed = new ArrayList<>();
      for (String backup : descriptor.backups()) {
        SimulatedServer peer = cluster.server(backup);
        if (peer == null || !peer.alive()) {
          failed.add(backup); // its connection closed: the stream failed
          continue;
        }
        Held copy = peer.regions().holding(descriptor.id());
        if (copy == null
            || copy.role() != RegionRole.BACKUP
            || copy.descriptor().epoch() != descriptor.epoch()) {
          continue; // not opened there yet: its stream is connecting
        }
        long since = Math.max(region.openedAt(), copy.openedAt());
        if (!descriptor.joining().contains(backup) || now - since >= cluster.catchUp().toNanos()) {
          inSync.add(backup);
        }
      }
      regions.add(
          new HeldRegion(
              descriptor.id(),
              descriptor.epoch(),
              RegionRole.PRIMARY,
              inSync.size() == descriptor.backups().size(),
              !failed.isEmpty(),
              inSync,
              failed,
              0,
              descriptor.joining(),
              0));
    }
    return regions;
  }

  @Override
  public Map<String, Long> stats() {
    Map<String, Long> stats = new TreeMap<>();
    for (Held region : held.values()) {
      stats.merge(
          region.role() == RegionRole.PRIMARY ? "primary.regions" : "backup.regions",
          1L,
          Long::sum);
    }
    return stats;
  }

  @Override
  public Map<String, Long> regionStats(long regionId) {
    Held region = held.get(regionId);
    if (region == null) {
      throw KvsException.of(StatusCode.NOT_FOUND, "region " + regionId + " is not held here");
    }
    return Map.of(
        "epoch",
        region.descriptor().epoch(),
        "primary",
        region.role() == RegionRole.PRIMARY ? 1L : 0L);
  }

  @Override
  public Map<String, Long> digest(long regionId) {
    throw KvsException.of(StatusCode.INVALID_ARGUMENT, "a simulated server holds no data");
  }

  private void fence(long regionId, long epoch) {
    long highest = highestEpoch(regionId);
    if (epoch < highest) {
      throw KvsException.of(
          StatusCode.STALE_EPOCH,
          "region " + regionId + " is at epoch " + highest + " here, not " + epoch);
    }
  }

  private final Map<Long, Object> locks = new ConcurrentHashMap<>();

  private Object lockOf(long regionId) {
    return locks.computeIfAbsent(regionId, id -> new Object());
  }
}
