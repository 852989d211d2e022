/**
 * The storage-engine benchmark ({@code ./kvs bench engine}): a YCSB-style driver that runs the KVS
 * engine, RocksDB (leveled, values in place) and RocksDB with its integrated BlobDB in one run, on
 * the same records and operations, with the same memory budget and client threads, and reports
 * throughput, CPU per operation, I/O and space amplification and latency percentiles per system, KV
 * size mix and workload. Workload generation follows YCSB's published definitions (zipfian,
 * scrambled zipfian, latest); the code is our own.
 */
package io.kvs.bench.engine;
