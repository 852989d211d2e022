/**
 * {@code ./kvs bench master-scale}: the real master and ZooKeeper against hundreds of simulated
 * region servers ({@link io.kvs.bench.scale.SimulatedCluster}: in-process servers that register in
 * ZooKeeper as real ones do and answer the control RPC from the regions they were told to open,
 * without an engine), measuring what a master's size costs: a reconcile pass's time, ZooKeeper
 * writes per change, the master's memory, the recovery of a failed server's regions, and the
 * client's region map, the status page and {@code ./kvs admin regions} at that size.
 */
package io.kvs.bench.scale;
