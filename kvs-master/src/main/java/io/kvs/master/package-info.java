/**
 * The master process: it wins a Curator leader election, keeps the region map in ZooKeeper,
 * bootstraps the cluster (assigning primaries and backups), and reconciles what every live server
 * holds with the map, pass after pass ({@code Reconciler}): failure recovery (groups shrink, an in
 * sync backup is promoted, groups heal), fencing by epochs, and reopening regions whose replication
 * failed. Every step is written to the map before servers are told, so a successor master finishes
 * what one left half done. {@code local} runs a cluster of processes on one machine. See
 * docs/ARCHITECTURE.md "Master" and "Failure recovery".
 */
package io.kvs.master;
