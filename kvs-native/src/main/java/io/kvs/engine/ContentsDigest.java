package io.kvs.engine;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A digest of the logical contents a replica of a region serves (or, for a send-index backup, would
 * serve if it were promoted): its live key/value pairs in key order, however they are stored, so
 * that equal digests mean the same pairs; and counts saying how much of it was compared ({@code
 * ./kvs local verify}, docs/OPERATIONS.md "Verifying replicas").
 *
 * @param digest the digest of the live pairs in key order
 * @param pairs live pairs served
 * @param levelPairs live pairs the device levels alone hold
 * @param levels device levels holding data
 * @param pastLevels past the levels: a region's in-memory level entries, or the log records a
 *     send-index backup replayed over its levels
 * @param dropped a send-index backup's log records past the first sequence number missing from its
 *     logs, which a promotion would drop (0 for a region)
 * @param lastLsn the last log sequence number served
 * @param compactedLsn every write up to this sequence number is in the levels
 */
public record ContentsDigest(
    long digest,
    long pairs,
    long levelPairs,
    long levels,
    long pastLevels,
    long dropped,
    long lastLsn,
    long compactedLsn) {
  /** The fields in the native order ({@code kvs_contents_digest}). */
  public static ContentsDigest of(long[] values) {
    if (values.length != 8) {
      throw new IllegalArgumentException("a contents digest has 8 fields, not " + values.length);
    }
    return new ContentsDigest(
        values[0], values[1], values[2], values[3], values[4], values[5], values[6], values[7]);
  }

  /** The fields by name, in declaration order (the control reply's counters). */
  public Map<String, Long> asMap() {
    Map<String, Long> fields = new LinkedHashMap<>();
    fields.put("digest", digest);
    fields.put("pairs", pairs);
    fields.put("levelPairs", levelPairs);
    fields.put("levels", levels);
    fields.put("pastLevels", pastLevels);
    fields.put("dropped", dropped);
    fields.put("lastLsn", lastLsn);
    fields.put("compactedLsn", compactedLsn);
    return fields;
  }
}
