/**
 * {@code ./kvs bench failover}: primary kills under a recorded load on a local cluster, measuring
 * how long regions are unavailable, how long until their groups are whole, throughput around each
 * kill, acknowledged writes lost and linearizability.
 */
package io.kvs.bench.failover;
