/**
 * The master process: it will win a Curator leader election, keep the region map in ZooKeeper,
 * assign primaries and backups, watch membership and drive recovery (see docs/ARCHITECTURE.md).
 * Empty until the cluster issue lands.
 */
package io.kvs.master;
