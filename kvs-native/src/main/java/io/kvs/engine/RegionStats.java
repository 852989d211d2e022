package io.kvs.engine;

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
 * @param largeLogBytes bytes appended to the large-value log
 * @param lastLsn the newest log sequence number
 * @param compactions compactions completed
 * @param compactionBytesWritten device bytes written by compactions
 * @param levelCount device levels holding data
 * @param levelKvBytes key and value bytes in the device levels
 * @param largeGarbageBytes large-log bytes no longer referenced (reclaimable by GC)
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
    long largeGarbageBytes) {
  static final int FIELDS = 15;

  static RegionStats of(long[] values) {
    return new RegionStats(
        values[0],
        values[1],
        values[2],
        values[3],
        values[4],
        values[5],
        values[6],
        values[7],
        values[8],
        values[9],
        values[10],
        values[11],
        values[12],
        values[13],
        values[14]);
  }
}
