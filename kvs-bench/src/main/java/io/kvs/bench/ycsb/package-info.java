/**
 * The YCSB binding: {@link io.kvs.bench.ycsb.KvsYcsbClient}, a {@code site.ycsb.DB} over the KVS
 * client, run by YCSB's own client ({@code site.ycsb.Client}) through {@code ./kvs ycsb load|run
 * <workload>}. YCSB core is a provided dependency: {@code ./kvs ycsb} puts it on the class path
 * from {@code kvs-bench/target/ycsb-lib/}. The workloads A to F live under {@code
 * src/main/resources/ycsb/}.
 */
package io.kvs.bench.ycsb;
