/**
 * Benchmarks and command-line tools run by the {@code ./kvs} launcher. Each tool prints a table to
 * stdout; benchmarks also write JSON lines under {@code target/bench/}. The helpers here are shared
 * by every benchmark: process CPU and device I/O counters ({@link io.kvs.bench.ResourceUsage}),
 * waiting for background work to finish ({@link io.kvs.bench.Quiescence}), disk usage ({@link
 * io.kvs.bench.DiskUsage}), latency histograms ({@link io.kvs.bench.Latencies}), JSON lines ({@link
 * io.kvs.bench.JsonLine}), text tables ({@link io.kvs.bench.TextTable}), PNG bar charts ({@link
 * io.kvs.bench.BarChart}) and time series ({@link io.kvs.bench.LineChart}). Each benchmark lives in
 * its own sub-package ({@code engine}, {@code protocol}, {@code replication}, {@code failover});
 * {@code history} records and checks client histories for the fault tests and the failover
 * benchmark.
 */
package io.kvs.bench;
