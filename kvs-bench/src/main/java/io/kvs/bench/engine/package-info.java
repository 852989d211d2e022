/**
 * The storage-engine benchmark ({@code ./kvs bench engine}): a YCSB-style driver that runs the KVS
 * engine, RocksDB (leveled, values in place) and RocksDB with its integrated BlobDB in one run, on
 * the same records and operations, with the same memory budget and client threads, and reports
 * throughput, CPU per operation, I/O and space amplification and latency percentiles per system, KV
 * size mix and workload. Workload generation follows YCSB's published definitions (zipfian,
 * scrambled zipfian, latest); the code is our own. The same systems, records and workloads also run
 * from C++ ({@link io.kvs.bench.engine.NativeEngineRunner}: {@code kvs_engine_bench} against
 * Debian's librocksdb), so that neither engine pays a JNI crossing in the other's favour; the
 * report shows both, each compared within its own kind.
 */
package io.kvs.bench.engine;
