package io.kvs.service;

/**
 * A region service's replication counters since it started: what it sent as a primary (summed over
 * its backups) and what it did as a backup for the Send-Index streams open now, and the CPU its
 * client writes cost the engine.
 *
 * @param logBytes records (build-index) or log bytes (send-index) written one-sidedly
 * @param indexBytes index segment bytes written one-sidedly (send-index)
 * @param writes one-sided writes
 * @param flushes FLUSH and FLUSH-TAIL messages
 * @param indexMessages SHIP-SEGMENT and INSTALL-LEVEL messages
 * @param indexShipCpuNanos CPU spent shipping index segments and levels (the primary's side)
 * @param backupTailBytes log bytes persisted as copies of a primary's segments
 * @param backupSegments index segments rewritten and written
 * @param backupLevels levels installed
 * @param backupLogCpuNanos CPU spent persisting log copies
 * @param backupIndexCpuNanos CPU spent on backup indexes: rewriting pointers and installing levels
 *     (send-index), applying records (build-index)
 * @param insertCpuNanos CPU the request threads spent applying client writes to their regions (the
 *     engine's insert), estimated from one write in 16 timed
 * @param batches batches the one-sided writes carried: one write carries the batches of several
 *     regions to one backup server when they were made while earlier writes were in flight
 * @param streamFailures streams to backups that failed (a broken connection, a refusal, the stall
 *     timeout): a region server watches it to tell the master at once
 */
public record ReplicationStats(
    long logBytes,
    long indexBytes,
    long writes,
    long flushes,
    long indexMessages,
    long indexShipCpuNanos,
    long backupTailBytes,
    long backupSegments,
    long backupLevels,
    long backupLogCpuNanos,
    long backupIndexCpuNanos,
    long insertCpuNanos,
    long batches,
    long streamFailures) {}
