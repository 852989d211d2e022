package io.kvs.service;

import io.kvs.core.ClosedException;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.engine.ContentsDigest;
import io.kvs.engine.Engine;
import io.kvs.engine.Region;
import io.kvs.nativelib.NativeLibrary;
import io.kvs.nativelib.internal.NativeMethods;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Answers wire-protocol requests (docs/PROTOCOL.md) from engine regions attached by id and epoch,
 * natively: the handler behind every transport. The fabric server and the client door ({@link
 * ClientDoor}) call it without entering the JVM; other callers hand it a request's bytes with
 * {@link #handle}. Requests for regions not attached get WRONG_REGION, for another epoch
 * STALE_EPOCH. Thread-safe; close it after the servers that use it and before the engine.
 */
public final class RegionService implements AutoCloseable {
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private long handle;

  /**
   * The engine the native service uses (null: none): held so that it stays reachable, and its
   * cleaner cannot free it, while the service may use it.
   */
  @SuppressWarnings("unused")
  private final Engine engine;

  private RegionService(long handle, Engine engine) {
    this.handle = handle;
    this.engine = engine;
  }

  /** A service with no region attached. */
  public static RegionService create() {
    NativeLibrary.load();
    return new RegionService(NativeMethods.serviceCreate(), null);
  }

  /**
   * A service with no region attached, serving regions of {@code engine}: send-index replication
   * taps the engine's regions, and keeps the copies of the regions this server backs up on its
   * volume. The service keeps a reference to the engine; close the service before the engine.
   */
  public static RegionService create(Engine engine) {
    NativeLibrary.load();
    RegionService service = new RegionService(NativeMethods.serviceCreate(), engine);
    NativeMethods.serviceUseEngine(service.handle, engine.nativeHandle());
    return service;
  }

  /** Serves {@code region} as {@code regionId} at {@code epoch}, replacing an earlier one. */
  public void attach(long regionId, long epoch, Region region) {
    lock.readLock().lock();
    try {
      NativeMethods.serviceAttach(live(), regionId, epoch, region.nativeHandle());
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Serves {@code region} as {@code regionId} at {@code epoch}, held as primary or as a backup
   * (whose client requests get NOT_PRIMARY), for keys in {@code [start, end)} ({@code end} empty:
   * unbounded; keys outside get WRONG_REGION). Replaces an earlier attachment.
   *
   * <p>A primary with {@code backups} replicates every write to them in {@code mode} and answers it
   * once every required one holds it (docs/ARCHITECTURE.md, "Failure recovery": backups in sync,
   * and joining ones once caught up); this needs a {@link io.kvs.fabric.FabricServer} started on
   * this service (its provider is the one used), and for {@link ReplicationMode#SEND_INDEX}
   * services created with their engine on both ends. Re-attached at a new epoch, a primary keeps
   * the streams of backups still in sync, and a backup under the same {@code primaryServer} keeps
   * what it holds; a backup not {@code joining} (the master counts it in sync) that holds a replica
   * refuses a new send-index stream, which would start it over. A write finding fewer than {@code
   * minReplicas} replicas in sync (this one counted) is refused with NOT_ENOUGH_REPLICAS; one that
   * cannot be replicated in time fails with IO_ERROR (its outcome unknown). A primary of a
   * replicating {@code mode} with no backup holding a write (none listed, or every one joining)
   * acknowledges it, and answers reads, only once what they touch is on its disk: a crash of this
   * server alone never loses an acknowledged write.
   *
   * <p>{@code streamKey} is the region's stream key at this epoch, the same for every member (the
   * master draws it): a primary's new replication streams prove it, and a backup takes a stream
   * only from a connection that proved it, so only the group's primary can replicate into it (null
   * on a backup: it takes no stream). A re-attach with another engine region returns once no
   * request uses the old one; so does {@link #detach}.
   *
   * @throws io.kvs.core.KvsException STALE_EPOCH, nothing changed, for a send-index backup not
   *     {@code joining} under the {@code primaryServer} whose stream into this region was cut here
   *     (the region was detached, or re-attached starting over, while that primary wrote into it):
   *     the primary may have counted writes its buffers took after nobody applied them, so it must
   *     be opened joining, its new stream's catch-up sending what it lacks
   */
  public void attach(
      long regionId,
      long epoch,
      Region region,
      boolean primary,
      byte[] start,
      byte[] end,
      List<Backup> backups,
      ReplicationMode mode,
      int minReplicas,
      String primaryServer,
      boolean joining,
      byte[] streamKey) {
    String[] hosts = new String[backups.size()];
    int[] ports = new int[backups.size()];
    boolean[] backupJoining = new boolean[backups.size()];
    for (int i = 0; i < hosts.length; i++) {
      hosts[i] = backups.get(i).address().getHostString();
      ports[i] = backups.get(i).address().getPort();
      backupJoining[i] = backups.get(i).joining();
    }
    lock.readLock().lock();
    try {
      NativeMethods.serviceAttachPlaced(
          live(),
          regionId,
          epoch,
          region.nativeHandle(),
          primary,
          start,
          end.length == 0 ? null : end,
          hosts,
          ports,
          backupJoining,
          mode == ReplicationMode.SEND_INDEX ? 1 : 0,
          minReplicas,
          primaryServer,
          joining,
          streamKey,
          mode.replicates());
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * A digest of what region {@code regionId}, held here as a backup, would serve if it were
   * promoted now. Under send-index: its installed levels with the records of its log copies (and of
   * what landed in its stream's buffers) past them, replayed as recovery would. Under build-index:
   * its own region with the records its stream holds beyond it (applied at the next flush, or when
   * it closes), scanned while the service keeps the region attached. Changes nothing; a digest
   * taken while the stream changes the replica may differ from one taken after (take it again).
   *
   * @throws io.kvs.core.KvsException NOT_FOUND for a region not held, INVALID_ARGUMENT for a
   *     primary (it serves its region: {@link io.kvs.engine.Region#contentsDigest}) or a send-index
   *     backup before its stream opened
   */
  public ContentsDigest replicaDigest(long regionId) {
    lock.readLock().lock();
    try {
      return ContentsDigest.of(NativeMethods.serviceReplicaDigest(live(), regionId));
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Promotes the send-index replica of region {@code regionId}, held in {@code engine}'s region
   * {@code engineName} (failure recovery): the region's stream here ends, the copies of its
   * primary's logs and the levels installed from it become the region's own, and the region is
   * reopened, replaying them to a point in time. The region is detached; attach the returned handle
   * as primary. Handles on the region taken before are closed.
   *
   * @throws io.kvs.core.KvsException INVALID_ARGUMENT if the region holds no replica, or an I/O
   *     error (the replica is then kept: promoting again retries)
   */
  public Promotion promote(long regionId, Engine engine, String engineName) {
    return promote(regionId, engine, engineName, new byte[0], new byte[0]);
  }

  /**
   * {@link #promote(long, Engine, String)} of a region serving keys in {@code [start, end)} (an
   * empty end: no end), which the promoted region keeps to: the levels of a region split from
   * another, shipped as they are, hold its sibling's keys too.
   */
  public Promotion promote(
      long regionId, Engine engine, String engineName, byte[] start, byte[] end) {
    byte[] name = engineName.getBytes(StandardCharsets.UTF_8);
    long[][] steps = new long[1][];
    lock.readLock().lock();
    try {
      long service = live();
      Region region =
          engine.reopenRegion(
              engineName,
              () -> steps[0] = NativeMethods.servicePromote(service, regionId, name, start, end));
      long[] s = steps[0];
      return new Promotion(region, s[0], s[1], s[2], s[3], s[4]);
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Fencing from now on: primaries answer client requests only while a lease holds ({@link
   * #renewLease}), and nothing before the first renewal. A region server in a cluster calls it
   * before it attaches any region; without it no lease is enforced (a service outside a cluster).
   */
  public void requireLease() {
    lock.readLock().lock();
    try {
      NativeMethods.serviceRequireLease(live());
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Fencing: primaries answer client requests for {@code validForNanos} from now, then NOT_PRIMARY
   * (writes before they are applied, reads after they read) until renewed. A region server renews
   * it while its ZooKeeper session holds, for less than the session timeout, so a server paused or
   * cut off stops answering before the master can act on its expiry.
   */
  public void renewLease(long validForNanos) {
    lock.readLock().lock();
    try {
      NativeMethods.serviceRenewLease(live(), validForNanos);
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * The watchdog's probe of the replication thread (one thread at a time; never blocks): whether it
   * came round its loop since the previous call (true on the first, and without replication); if it
   * did, it is asked to come round again. False too when a lock it takes is held at that instant:
   * only a run of misses over many seconds means the thread is stuck.
   */
  public boolean probeReplication() {
    lock.readLock().lock();
    try {
      return NativeMethods.serviceProbeReplication(live());
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * A primary's backup: its server's fabric bootstrap address, and whether it is joining (the
   * master does not count it in sync yet: writes do not wait for it until its catch-up is done).
   */
  public record Backup(InetSocketAddress address, boolean joining) {}

  /** How one of a primary's backups stands: {@link #backupStates}. */
  public enum BackupState {
    /** It holds every write the primary acknowledged: it may be promoted. */
    IN_SYNC,
    /** Its stream is starting or catching it up. */
    CATCHING_UP,
    /** Its stream failed: the region must be opened again (writes that need it wait). */
    FAILED
  }

  /**
   * How region {@code regionId}'s backups stand, held here as a primary, in the order of its
   * placement; empty if it is not held as a primary or has no backups.
   */
  public List<BackupState> backupStates(long regionId) {
    byte[] states;
    lock.readLock().lock();
    try {
      states = NativeMethods.serviceBackupStates(live(), regionId);
    } finally {
      lock.readLock().unlock();
    }
    List<BackupState> result = new java.util.ArrayList<>(states.length);
    for (byte state : states) {
      result.add(
          state > 0
              ? BackupState.IN_SYNC
              : state < 0 ? BackupState.FAILED : BackupState.CATCHING_UP);
    }
    return result;
  }

  /**
   * How far one of a primary's backups is behind it (monitoring).
   *
   * @param queuedBytes bytes queued for it and not yet sent
   * @param writes writes the primary applied that it does not hold yet
   * @param oldestWaitNanos how long the oldest write waiting for it has waited (0: none waits)
   */
  public record BackupLag(long queuedBytes, long writes, long oldestWaitNanos) {}

  /**
   * How far region {@code regionId}'s backups are behind, held here as a primary, in the order of
   * its placement; empty if it is not held as a primary or has no backups.
   */
  public List<BackupLag> backupLags(long regionId) {
    long[] values;
    lock.readLock().lock();
    try {
      values = NativeMethods.serviceBackupLags(live(), regionId);
    } finally {
      lock.readLock().unlock();
    }
    List<BackupLag> lags = new java.util.ArrayList<>(values.length / 3);
    for (int i = 0; i + 2 < values.length; i += 3) {
      lags.add(new BackupLag(values[i], values[i + 1], values[i + 2]));
    }
    return lags;
  }

  /**
   * Why the stream to region {@code regionId}'s backup number {@code index} (placement order)
   * failed, or empty if it did not.
   */
  public Optional<String> backupFailure(long regionId, int index) {
    lock.readLock().lock();
    try {
      return Optional.ofNullable(NativeMethods.serviceBackupFailure(live(), regionId, index));
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Whether {@code engineName} holds a send-index replica (levels and logs of a primary's). */
  public boolean holdsReplica(String engineName) {
    lock.readLock().lock();
    try {
      return NativeMethods.serviceHoldsReplica(live(), engineName.getBytes(StandardCharsets.UTF_8));
    } finally {
      lock.readLock().unlock();
    }
  }

  /** What this service replicated as a primary and did as a backup, since it started. */
  public ReplicationStats replicationStats() {
    lock.readLock().lock();
    try {
      long[] counters = NativeMethods.serviceReplicationStats(live());
      return new ReplicationStats(
          counters[0],
          counters[1],
          counters[2],
          counters[3],
          counters[4],
          counters[5],
          counters[6],
          counters[7],
          counters[8],
          counters[9],
          counters[10],
          counters[11],
          counters[12],
          counters[13]);
    } finally {
      lock.readLock().unlock();
    }
  }

  /** What this service answered to clients since it started, by operation and status. */
  public RequestStats requestStats() {
    lock.readLock().lock();
    try {
      return new RequestStats(NativeMethods.serviceRequestStats(live()));
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Turns request metrics on (the default) or off; off, the request path reads no clock and counts
   * nothing ({@link #requestStats()} stops growing). To measure what they cost.
   */
  public void requestMetrics(boolean enabled) {
    lock.readLock().lock();
    try {
      NativeMethods.serviceSetRequestMetrics(live(), enabled);
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Stops serving {@code regionId}; returns once no request uses its engine region (which may be
   * dropped or closed then). A primary hands its last records to its backups first.
   */
  public void detach(long regionId) {
    lock.readLock().lock();
    try {
      NativeMethods.serviceDetach(live(), regionId);
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Like {@link #detach}, and fails if a primary's last records did not reach every backup of its
   * group within the replication timeout (then a backup may lack a write the primary's region
   * holds; what a split must know before its commit).
   *
   * @throws io.kvs.core.KvsException why the hand-over failed (the region is detached anyway)
   */
  public void detachFlushed(long regionId) {
    lock.readLock().lock();
    try {
      NativeMethods.serviceDetachFlushed(live(), regionId);
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The longest a sealed region holds its requests for its successors (the native bound). */
  public static final Duration SEALED_HOLD = Duration.ofMillis(500);

  /**
   * {@link #detachFlushed} for a split or a merge: the client requests that reach the region from
   * now on are held, for at most {@code hold} (capped at {@link #SEALED_HOLD}), until a region that
   * takes it over is attached ({@link #takeOver}), it is attached again, or the hold ends; then
   * they run again (in the region that took them over, or refused WRONG_REGION). A client so sees
   * the split as a pause, not a refusal and its map's refresh.
   *
   * @throws io.kvs.core.KvsException why the hand-over failed (the region is detached, its held
   *     requests refused)
   */
  public void detachSealed(long regionId, Duration hold) {
    lock.readLock().lock();
    try {
      NativeMethods.serviceDetachSealed(
          live(), regionId, (int) Math.min(hold.toMillis(), SEALED_HOLD.toMillis()));
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Region {@code regionId}, attached here, takes over the client requests addressed to {@code
   * predecessors} (the parent it was split from, the regions merged into it), which this server no
   * longer serves: a put, delete, get or multi-get whose keys lie in its range runs in it while it
   * is attached here as primary, at its epoch (a scan is refused WRONG_REGION: its client must
   * learn where the region ends). Their held requests run now.
   */
  public void takeOver(long regionId, long... predecessors) {
    lock.readLock().lock();
    try {
      NativeMethods.serviceTakeOver(live(), regionId, predecessors.clone());
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Answers the encoded request in {@code request[position, position + length)} (a direct buffer)
   * and returns the encoded reply; malformed bytes get an INVALID_ARGUMENT reply.
   */
  public byte[] handle(ByteBuffer request, int position, int length) {
    if (!request.isDirect()) {
      throw new IllegalArgumentException("request must be a direct buffer");
    }
    lock.readLock().lock();
    try {
      return NativeMethods.serviceHandle(live(), request, position, length);
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The native handle, for the servers of this library; not for applications. */
  public long nativeHandle() {
    lock.readLock().lock();
    try {
      return live();
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Frees the service; idempotent. */
  @Override
  public void close() {
    lock.writeLock().lock();
    try {
      if (handle != 0) {
        NativeMethods.serviceDestroy(handle);
        handle = 0;
      }
    } finally {
      lock.writeLock().unlock();
    }
  }

  private long live() {
    if (handle == 0) {
      throw new ClosedException("region service is closed");
    }
    return handle;
  }
}
