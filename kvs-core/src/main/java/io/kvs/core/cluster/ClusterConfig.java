package io.kvs.core.cluster;

import java.util.ArrayList;
import java.util.List;

/**
 * A cluster's configuration, fixed when the master bootstraps it.
 *
 * @param regions how many regions the key space is split into
 * @param replicationFactor replicas per region, primary included (1..3); 1 under {@link
 *     ReplicationMode#NONE}
 * @param mode how writes reach the backups
 * @param splitPoints the start keys of regions 2..N in order; empty for a uniform split of the
 *     first key byte range (see {@link #uniformSplits})
 * @param minReplicas the fewest replicas of a region (its primary counted) that must hold a write
 *     in sync for it to be accepted (Kafka's {@code min.insync.replicas}): a region with fewer
 *     refuses writes with NOT_ENOUGH_REPLICAS instead of acknowledging them with less redundancy.
 *     1..replicationFactor; 1 (the default) keeps every region writable while its primary lives
 */
public record ClusterConfig(
    int regions,
    int replicationFactor,
    ReplicationMode mode,
    List<byte[]> splitPoints,
    int minReplicas) {
  /** Largest replication factor. */
  public static final int REPLICATION_MAX = 3;

  /** A configuration with {@code minReplicas} 1. */
  public ClusterConfig(
      int regions, int replicationFactor, ReplicationMode mode, List<byte[]> splitPoints) {
    this(regions, replicationFactor, mode, splitPoints, 1);
  }

  public ClusterConfig {
    splitPoints = List.copyOf(splitPoints == null ? List.of() : splitPoints);
    if (regions < 1 || regions > 65536) {
      throw new IllegalArgumentException("regions must be 1..65536: " + regions);
    }
    if (replicationFactor < 1 || replicationFactor > REPLICATION_MAX) {
      throw new IllegalArgumentException("replication factor must be 1..3: " + replicationFactor);
    }
    if (mode == ReplicationMode.NONE && replicationFactor != 1) {
      throw new IllegalArgumentException("replication mode none has replication factor 1");
    }
    if (mode != ReplicationMode.NONE && replicationFactor < 2) {
      throw new IllegalArgumentException("replication mode " + mode.configName() + " needs 2..3");
    }
    if (minReplicas < 1 || minReplicas > replicationFactor) {
      throw new IllegalArgumentException(
          "min replicas must be 1.." + replicationFactor + ": " + minReplicas);
    }
    if (!splitPoints.isEmpty() && splitPoints.size() != regions - 1) {
      throw new IllegalArgumentException(
          regions + " regions need " + (regions - 1) + " split points, got " + splitPoints.size());
    }
    for (int i = 0; i < splitPoints.size(); i++) {
      if (splitPoints.get(i).length == 0
          || (i > 0 && Keys.compare(splitPoints.get(i - 1), splitPoints.get(i)) >= 0)) {
        throw new IllegalArgumentException("split points must be non-empty and increasing");
      }
    }
  }

  /** The start keys of regions 2..N: the given split points, or a uniform split. */
  public List<byte[]> effectiveSplits() {
    return splitPoints.isEmpty() ? uniformSplits(regions) : splitPoints;
  }

  /**
   * {@code regions - 1} split points for keys that are {@code prefix} followed by a decimal number
   * of many digits (YCSB's {@code user<hash>}): three-digit boundaries spread evenly over {@code
   * 100..922}, the leading digits of such numbers.
   */
  public static List<byte[]> decimalSplits(String prefix, int regions) {
    if (regions > 823) {
      throw new IllegalArgumentException("at most 823 regions split after a decimal prefix");
    }
    List<byte[]> splits = new ArrayList<>();
    for (int i = 1; i < regions; i++) {
      int digits = 100 + (int) ((long) i * 823 / regions);
      splits.add((prefix + digits).getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
    return splits;
  }

  /**
   * {@code regions - 1} split points spread evenly over the first two key bytes (so that keys with
   * uniformly random leading bytes spread evenly).
   */
  public static List<byte[]> uniformSplits(int regions) {
    List<byte[]> splits = new ArrayList<>();
    for (int i = 1; i < regions; i++) {
      int point = (int) ((long) i * 65536 / regions);
      splits.add(new byte[] {(byte) (point >>> 8), (byte) point});
    }
    return splits;
  }
}
