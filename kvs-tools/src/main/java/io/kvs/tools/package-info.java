/**
 * An operator's tools, run by the {@code ./kvs} launcher: the local cluster of processes ({@code
 * local}, {@code ./kvs local}), the admin commands ({@code admin}, {@code ./kvs admin}), the
 * interactive shell ({@code shell}) and the demo ({@code demo}). The helpers here are shared with
 * the benchmarks: starting a local cluster as a process ({@link io.kvs.tools.LaunchedCluster}),
 * latency histograms ({@link io.kvs.tools.Latencies}), JSON lines ({@link io.kvs.tools.JsonLine}),
 * text tables ({@link io.kvs.tools.TextTable}), deleting directories ({@link
 * io.kvs.tools.Directories}).
 */
package io.kvs.tools;
