/**
 * {@code ./kvs bench replication}: Send-Index against Build-Index and no replication on a local
 * cluster of processes, under YCSB ({@link io.kvs.bench.replication.ReplicationBenchmark}); per
 * phase the servers' CPU by thread role, I/O, context switches and replication counters ({@link
 * io.kvs.bench.replication.ServerSample}), reported as a table, JSON lines and a chart ({@link
 * io.kvs.bench.replication.ReplicationReport}) and, where both index modes ran, as the seeds' Table
 * 3 breakdown ({@link io.kvs.bench.replication.Table3Breakdown}).
 */
package io.kvs.bench.replication;
