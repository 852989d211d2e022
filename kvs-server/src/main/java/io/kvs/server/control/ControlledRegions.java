package io.kvs.server.control;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.HeldRegion;
import io.kvs.core.control.StreamKey;
import java.util.List;
import java.util.Map;

/**
 * The regions a server holds, as the control RPC commands and reads them ({@link
 * io.kvs.server.regions.HostedRegions}). {@link ControlServer} runs {@link #open} and {@link
 * #close} one at a time on one thread and the reads on others, so the reads must not wait for a
 * change in progress (an open may replay a long log, a close waits for its backups). Every method
 * may throw {@link io.kvs.core.KvsException}, which becomes the reply's status.
 */
public interface ControlledRegions {
  /**
   * Opens {@code region} in the role it gives this server (control command {@code open}), with the
   * region's {@code streamKey} at this epoch; {@code backups} are the backups' registrations as the
   * master read them (a backup missing from it is looked up in ZooKeeper).
   */
  void open(
      RegionDescriptor region,
      ReplicationMode mode,
      int minReplicas,
      StreamKey streamKey,
      Map<String, ServerInfo> backups);

  /** Opens {@code region}, looking its backups' registrations up in ZooKeeper. */
  default void open(
      RegionDescriptor region, ReplicationMode mode, int minReplicas, StreamKey streamKey) {
    open(region, mode, minReplicas, streamKey, Map.of());
  }

  /** Stops serving region {@code regionId} at {@code epoch} (control command {@code close}). */
  void close(long regionId, long epoch);

  /**
   * Seals region {@code regionId}, led here at {@code epoch}, for its split at {@code key} (empty:
   * its middle by size, or with {@code byLoad} the median of its recent requests' keys); returns
   * the split key (control command {@code seal}).
   */
  byte[] seal(long regionId, long epoch, byte[] key, boolean byLoad);

  /**
   * Retires region {@code regionId}, led here at {@code epoch}, for its merge with a neighbour
   * (control command {@code retire}): stops serving it once every backup holds every write.
   */
  void retire(long regionId, long epoch);

  /**
   * Prepares region {@code regionId}, led here at {@code epoch}, for a handover of its leadership
   * (control command {@code prepareHandover}): merges its in-memory level into its levels, waiting
   * a bounded time; returns the reply's counters ({@code merged}, {@code l0Bytes}).
   */
  Map<String, Long> prepareHandover(long regionId, long epoch);

  /** The highest epoch this server accepted for {@code regionId} (0: none). */
  long highestEpoch(long regionId);

  /** What this server holds now (control command {@code list}). */
  List<HeldRegion> list();

  /** This server's counters (control command {@code stats}). */
  Map<String, Long> stats();

  /** Region {@code regionId}'s counters here (control command {@code regionStats}). */
  Map<String, Long> regionStats(long regionId);

  /** A digest of region {@code regionId} here (control command {@code digest}; may scan it). */
  Map<String, Long> digest(long regionId);
}
