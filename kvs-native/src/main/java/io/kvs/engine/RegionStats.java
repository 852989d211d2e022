package io.kvs.engine;

import java.util.Arrays;
import java.util.List;

/**
 * A snapshot of a region's counters.
 *
 * @param puts puts accepted
 * @param deletes deletes accepted
 * @param gets gets served
 * @param l0Bytes memory held by the in-memory level(s)
 * @param l0Entries entries in the in-memory level(s)
 * @param stalls writes that waited for a full in-memory level to drain
 * @param stallMicros time spent in those waits
 * @param smallLogBytes bytes appended to the write-ahead (small) log
 * @param largeLogBytes bytes appended to the large-value log (GC relocations included)
 * @param lastLsn the newest log sequence number
 * @param compactions compactions completed
 * @param compactionBytesWritten device bytes written by compactions (nodes, filters, medium log)
 * @param levelCount device levels holding data
 * @param levelKvBytes key and value bytes in the device levels; of a region split from another, its
 *     part of levels it shares with its sibling (estimated from their indexes)
 * @param largeGarbageBytes large-log bytes no longer referenced (reclaimable by GC)
 * @param gcRelocatedBytes live large-log bytes GC moved out of segments it reclaimed
 * @param gcFreedSegments large-log segments GC gave back to the volume
 * @param largeLogSegments large-log segments held now
 * @param compactionBytesRead device bytes compactions read (input nodes and medium records)
 * @param mediumLogBytes bytes compactions wrote into medium logs
 * @param valueBytesRead log record bytes read by gets and scans (values behind pointers)
 * @param gcBytesRead large-log bytes GC read to find live records
 * @param levelBytesRead per level, from L1 (index 0) to L8 (deeper levels count there): device
 *     bytes read by the compactions into that level
 * @param levelBytesWritten per level as above: device bytes written by the compactions into it
 * @param recovery what opening the region recovered from its logs
 * @param compactionMicros wall time of the compactions counted, from start to install
 * @param sharedSegments segments of its levels and large log that another region holds too (the
 *     other daughter of a split, until compactions rewrite them)
 * @param l0KvBytes key and value bytes written into its in-memory level (L0) since it was last
 *     merged into the device levels ({@code l0Bytes} is the memory it takes: large values stay in
 *     the log, so it holds only their pointers)
 */
public record RegionStats(
    long puts,
    long deletes,
    long gets,
    long l0Bytes,
    long l0Entries,
    long stalls,
    long stallMicros,
    long smallLogBytes,
    long largeLogBytes,
    long lastLsn,
    long compactions,
    long compactionBytesWritten,
    long levelCount,
    long levelKvBytes,
    long largeGarbageBytes,
    long gcRelocatedBytes,
    long gcFreedSegments,
    long largeLogSegments,
    long compactionBytesRead,
    long mediumLogBytes,
    long valueBytesRead,
    long gcBytesRead,
    List<Long> levelBytesRead,
    List<Long> levelBytesWritten,
    Recovery recovery,
    long compactionMicros,
    long sharedSegments,
    long l0KvBytes) {
  /** Levels with their own statistics slot. */
  public static final int LEVELS = 8;

  private static final int SCALARS = 22;
  private static final int RECOVERY_FIELDS = 4;
  static final int FIELDS = SCALARS + 2 * LEVELS + RECOVERY_FIELDS + 3;

  /**
   * What opening a region recovered (zeros for a region created by this engine).
   *
   * @param replayedWrites writes replayed from the logs into the in-memory level
   * @param droppedWrites writes found in a log past the first sequence number missing from both
   *     logs, dropped because a write acknowledged before them was lost (recovery is to a point in
   *     time)
   * @param cutLsn that first missing sequence number, or 0 when nothing was dropped
   * @param micros how long replaying the logs took
   */
  public record Recovery(long replayedWrites, long droppedWrites, long cutLsn, long micros) {}

  static RegionStats of(long[] v) {
    return new RegionStats(
        v[0],
        v[1],
        v[2],
        v[3],
        v[4],
        v[5],
        v[6],
        v[7],
        v[8],
        v[9],
        v[10],
        v[11],
        v[12],
        v[13],
        v[14],
        v[15],
        v[16],
        v[17],
        v[18],
        v[19],
        v[20],
        v[21],
        List.of(box(Arrays.copyOfRange(v, SCALARS, SCALARS + LEVELS))),
        List.of(box(Arrays.copyOfRange(v, SCALARS + LEVELS, SCALARS + 2 * LEVELS))),
        new Recovery(
            v[SCALARS + 2 * LEVELS],
            v[SCALARS + 2 * LEVELS + 1],
            v[SCALARS + 2 * LEVELS + 2],
            v[SCALARS + 2 * LEVELS + 3]),
        v[SCALARS + 2 * LEVELS + RECOVERY_FIELDS],
        v[SCALARS + 2 * LEVELS + RECOVERY_FIELDS + 1],
        v[SCALARS + 2 * LEVELS + RECOVERY_FIELDS + 2]);
  }

  private static Long[] box(long[] values) {
    return Arrays.stream(values).boxed().toArray(Long[]::new);
  }
}
