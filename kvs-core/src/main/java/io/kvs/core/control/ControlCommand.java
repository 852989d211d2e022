package io.kvs.core.control;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.ReplicationMode;

/** A command to a region server. */
public sealed interface ControlCommand {
  /**
   * Open (or re-open at a new epoch) {@code region} in the role the descriptor gives the receiving
   * server, replicating under {@code mode}; a primary refuses writes while fewer than {@code
   * minReplicas} replicas are in sync ({@link io.kvs.core.cluster.ClusterConfig#minReplicas}).
   * {@code streamKey} is the region's key at this epoch, the same for every member: the primary's
   * replication streams prove it, backups take streams only from a connection that did. Idempotent
   * for the same epoch; a lower epoch than the server holds is refused with STALE_EPOCH.
   */
  record Open(RegionDescriptor region, ReplicationMode mode, int minReplicas, StreamKey streamKey)
      implements ControlCommand {
    public Open {
      if (minReplicas < 1) {
        throw new IllegalArgumentException("min replicas must be at least 1: " + minReplicas);
      }
      java.util.Objects.requireNonNull(streamKey, "streamKey");
    }

    /** An open with {@code minReplicas} 1. */
    public Open(RegionDescriptor region, ReplicationMode mode, StreamKey streamKey) {
      this(region, mode, 1, streamKey);
    }
  }

  /** Stop serving region {@code regionId} (its data stays on the server). Idempotent. */
  record Close(long regionId, long epoch) implements ControlCommand {}

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
   * Report a digest of what region {@code regionId} holds here, for comparing a region's replicas
   * ({@code ./kvs local verify}). The reply's counters: {@code digest}, {@code entries}, {@code
   * levels} and {@code scope} ({@link #DIGEST_LEVELS} or {@link #DIGEST_SCAN}), and for {@link
   * #DIGEST_LEVELS} {@code l0Entries}, what the region's L0 holds here (a backup's: none).
   */
  record Digest(long regionId) implements ControlCommand {}

  /**
   * A Digest's scope under send-index: the device levels (a primary's own, a backup's installed); a
   * backup keeps no L0, so those are what two replicas share.
   */
  long DIGEST_LEVELS = 0;

  /** A Digest's scope under build-index and none: every live pair of a full scan of the region. */
  long DIGEST_SCAN = 1;
}
