/**
 * {@code ./kvs bench conditional}: what a compare-and-set and an increment cost against a put, in
 * latency and in the servers' CPU per operation, on a local replicated cluster ({@link
 * io.kvs.bench.conditional.ConditionalBenchmark}).
 */
package io.kvs.bench.conditional;
