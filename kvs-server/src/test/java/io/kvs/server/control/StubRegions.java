package io.kvs.server.control;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.HeldRegion;
import io.kvs.core.control.StreamKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * What a control server commands, without an engine: it holds a region once told to open it, at the
 * epoch and in the role the command gives server {@code serverId}. An open can be made to hang
 * until {@link #release()} (a region replaying a long log, a server stuck in an open).
 */
public final class StubRegions implements ControlledRegions {
  private final String serverId;
  private final Map<Long, HeldRegion> held = new ConcurrentHashMap<>();
  private final CountDownLatch released = new CountDownLatch(1);
  private final CountDownLatch opening = new CountDownLatch(1);
  private final Consumer<RegionDescriptor> onOpen;
  private volatile boolean hang;

  /** A server {@code serverId} whose opens report themselves to {@code onOpen} as they arrive. */
  public StubRegions(String serverId, Consumer<RegionDescriptor> onOpen) {
    this.serverId = serverId;
    this.onOpen = onOpen;
  }

  public StubRegions(String serverId) {
    this(serverId, region -> {});
  }

  /** Makes every open from now on hang until {@link #release()}. */
  public StubRegions hangOpens() {
    hang = true;
    return this;
  }

  /** Lets hanging opens (and later ones) finish. */
  public void release() {
    released.countDown();
  }

  /** Waits until an open has begun, at most {@code seconds}; whether one did. */
  public boolean awaitOpening(long seconds) throws InterruptedException {
    return opening.await(seconds, TimeUnit.SECONDS);
  }

  @Override
  public void open(
      RegionDescriptor region,
      ReplicationMode mode,
      int minReplicas,
      StreamKey streamKey,
      Map<String, ServerInfo> backups) {
    onOpen.accept(region);
    opening.countDown();
    if (hang) {
      try {
        released.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw KvsException.of(StatusCode.IO_ERROR, "interrupted");
      }
    }
    held.put(region.id(), new HeldRegion(region.id(), region.epoch(), region.roleOf(serverId)));
  }

  @Override
  public void close(long regionId, long epoch) {
    held.remove(regionId);
  }

  @Override
  public byte[] seal(long regionId, long epoch, byte[] key, boolean byLoad) {
    held.remove(regionId);
    return key;
  }

  @Override
  public void retire(long regionId, long epoch) {
    held.remove(regionId);
  }

  @Override
  public Map<String, Long> prepareHandover(long regionId, long epoch) {
    if (highestEpoch(regionId) != epoch) {
      throw KvsException.of(
          StatusCode.STALE_EPOCH, "region " + regionId + " is not held here at epoch " + epoch);
    }
    return Map.of("merged", 1L, "l0Bytes", 0L);
  }

  @Override
  public long highestEpoch(long regionId) {
    HeldRegion region = held.get(regionId);
    return region == null ? 0 : region.epoch();
  }

  @Override
  public List<HeldRegion> list() {
    return new ArrayList<>(new TreeMap<>(held).values());
  }

  @Override
  public Map<String, Long> stats() {
    return Map.of("primary.regions", (long) held.size());
  }

  @Override
  public Map<String, Long> regionStats(long regionId) {
    return Map.of("epoch", highestEpoch(regionId));
  }

  @Override
  public Map<String, Long> digest(long regionId) {
    return Map.of("digest", regionId);
  }
}
