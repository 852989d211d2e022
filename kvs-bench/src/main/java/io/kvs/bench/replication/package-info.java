/**
 * {@code ./kvs bench replication}: Send-Index against Build-Index and no replication on a local
 * cluster of processes, under YCSB ({@link io.kvs.bench.replication.ReplicationBenchmark}).
 */
package io.kvs.bench.replication;
