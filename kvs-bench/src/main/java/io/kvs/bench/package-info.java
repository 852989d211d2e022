/**
 * Benchmarks run by the {@code ./kvs} launcher. Each prints a table to stdout and writes JSON lines
 * under {@code target/bench/}. The helpers here are shared by every benchmark: process CPU and
 * device I/O counters ({@link io.kvs.bench.ResourceUsage}), other processes' CPU and context
 * switches ({@link io.kvs.bench.ServerCpu}), waiting for background work to finish ({@link
 * io.kvs.bench.Quiescence}), disk usage ({@link io.kvs.bench.DiskUsage}), PNG bar charts ({@link
 * io.kvs.bench.BarChart}) and time series ({@link io.kvs.bench.LineChart}); tables, JSON and
 * latency histograms come from the operator tools ({@code io.kvs.tools}). Each benchmark lives in
 * its own sub-package ({@code engine}, {@code protocol}, {@code replication}, {@code failover},
 * {@code elastic}, {@code tail}, {@code conditional}, {@code scale}, {@code chaos}); {@code
 * history} records and checks client histories for the fault tests and the failover benchmark;
 * {@code ycsb} is the YCSB binding.
 */
package io.kvs.bench;
