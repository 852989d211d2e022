package io.kvs.core.control;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.cluster.ServerInfo;
import java.util.Map;

/** A command to a region server. */
public sealed interface ControlCommand {
  /**
   * Open (or re-open at a new epoch) {@code region} in the role the descriptor gives the receiving
   * server, replicating under {@code mode}; a primary refuses writes while fewer than {@code
   * minReplicas} replicas are in sync ({@link io.kvs.core.cluster.ClusterConfig#minReplicas}).
   * {@code streamKey} is the region's key at this epoch, the same for every member: the primary's
   * replication streams prove it, backups take streams only from a connection that did. {@code
   * backups} are the registrations of the region's backups as the master read them for the pass
   * that sends the command (where a primary's streams connect; a backup missing from it is looked
   * up in ZooKeeper by the primary). Idempotent for the same epoch; a lower epoch than the server
   * holds is refused with STALE_EPOCH.
   */
  record Open(
      RegionDescriptor region,
      ReplicationMode mode,
      int minReplicas,
      StreamKey streamKey,
      Map<String, ServerInfo> backups)
      implements ControlCommand {
    public Open {
      if (minReplicas < 1) {
        throw new IllegalArgumentException("min replicas must be at least 1: " + minReplicas);
      }
      java.util.Objects.requireNonNull(streamKey, "streamKey");
      backups = Map.copyOf(backups);
    }

    /** An open whose backups the primary looks up itself. */
    public Open(
        RegionDescriptor region, ReplicationMode mode, int minReplicas, StreamKey streamKey) {
      this(region, mode, minReplicas, streamKey, Map.of());
    }

    /** An open with {@code minReplicas} 1. */
    public Open(RegionDescriptor region, ReplicationMode mode, StreamKey streamKey) {
      this(region, mode, 1, streamKey);
    }
  }

  /** Stop serving region {@code regionId} (its data stays on the server). Idempotent. */
  record Close(long regionId, long epoch) implements ControlCommand {}

  /**
   * The first step of splitting region {@code regionId}, held here as primary at {@code epoch}:
   * stop serving it (requests get WRONG_REGION until its daughters open) once every backup holds
   * every write its region holds, so that each member can split its copy of the region after the
   * master commits the split. {@code key} is where to split (empty: the server picks the middle of
   * the region by size, or with {@code byLoad} the median of the keys its recent requests named,
   * falling back to the middle by size when it sampled too few). The reply's message is the split
   * key (base64). Refused, the region still served: STALE_EPOCH or NOT_PRIMARY if this server does
   * not lead it at that epoch, BUSY while a backup is not in sync, INVALID_ARGUMENT for a key not
   * strictly inside the region (or a region with fewer than two keys to pick from). A seal whose
   * hand-over to the backups failed leaves the region closed here: the master reopens it.
   */
  record Seal(long regionId, long epoch, byte[] key, boolean byLoad) implements ControlCommand {
    public Seal {
      java.util.Objects.requireNonNull(key, "key");
    }

    /** A seal at {@code key} (empty: the middle by size). */
    public Seal(long regionId, long epoch, byte[] key) {
      this(regionId, epoch, key, false);
    }
  }

  /**
   * The first step of merging region {@code regionId}, held here as primary at {@code epoch}, with
   * a neighbour: stop serving it (requests get WRONG_REGION until the merged region opens) once
   * every backup holds every write its region holds, so that each member can merge its copies after
   * the master commits the merge. Refused, the region still served: STALE_EPOCH or NOT_PRIMARY if
   * this server does not lead it at that epoch. As after a seal, a region whose hand-over to the
   * backups failed is left closed here: the master reopens it.
   */
  record Retire(long regionId, long epoch) implements ControlCommand {}

  /**
   * Prepare region {@code regionId}, held here as primary at {@code epoch}, for a handover of its
   * leadership: merge the writes its in-memory level holds into its levels while it keeps serving
   * (waiting a bounded time), so that under send-index the new primary, whose index is the one
   * shipped at the last merge, replays few log records while the region is unavailable. Nothing
   * changes what the region holds; a region holding too little to be worth a merge is left alone.
   * The reply's counters: {@code merged} (1 if every write before the command was merged in time)
   * and {@code l0Bytes} (what the in-memory level held). Refused: STALE_EPOCH or NOT_PRIMARY if
   * this server does not lead it at that epoch.
   */
  record PrepareHandover(long regionId, long epoch) implements ControlCommand {}

  /** List the regions the server holds. */
  record ListRegions() implements ControlCommand {}

  /**
   * Report the server's counters (replication, and its regions' engine statistics summed by role):
   * for benchmarks and tools.
   */
  record Stats() implements ControlCommand {}

  /**
   * Report region {@code regionId}'s counters here ({@code ./kvs admin stats}): {@code epoch},
   * {@code primary} (1 if this server is its primary, 0 for a backup) and its engine statistics
   * ({@code puts}, {@code gets}, {@code l0Bytes}, {@code compactions}, ...); NOT_FOUND if it is not
   * held here.
   */
  record RegionStats(long regionId) implements ControlCommand {}

  /**
   * Report a digest of what region {@code regionId} serves here, for comparing a region's replicas
   * ({@code ./kvs local verify}): of its live pairs in key order, however stored. The reply's
   * counters: {@code digest}, {@code pairs} (live pairs), {@code levelPairs} (live pairs the device
   * levels alone hold), {@code levels} (device levels holding data), {@code pastLevels} (in-memory
   * level entries, or for {@link #DIGEST_SEND_INDEX_BACKUP} the log records replayed past the
   * levels), {@code dropped} (log records past the first missing sequence number, which a promotion
   * drops), {@code lastLsn}, {@code compactedLsn} and {@code scope}.
   */
  record Digest(long regionId) implements ControlCommand {}

  /**
   * A Digest's scope for a send-index backup: what it would serve if it were promoted now, its
   * installed levels with the records of its log copies (and of its stream's buffers) past them,
   * replayed as recovery would.
   */
  long DIGEST_SEND_INDEX_BACKUP = 0;

  /** A Digest's scope for a primary (or a region without replication): what its region serves. */
  long DIGEST_SERVED = 1;

  /**
   * A Digest's scope for a build-index backup: what it would serve if it were promoted now, what
   * its own region serves with the records its stream holds beyond it (not applied yet) applied.
   */
  long DIGEST_BUILD_INDEX_BACKUP = 2;
}
