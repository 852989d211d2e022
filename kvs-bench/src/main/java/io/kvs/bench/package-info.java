/**
 * Benchmarks and command-line tools run by the {@code ./kvs} launcher. Each tool prints a table to
 * stdout; benchmarks also write JSON lines under {@code target/bench/}.
 */
package io.kvs.bench;
