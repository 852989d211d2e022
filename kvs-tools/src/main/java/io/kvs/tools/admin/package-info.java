/**
 * {@code ./kvs admin} (also the shell's {@code admin} command): an operator's commands to a running
 * cluster. Listing servers and regions and a region's counters read ZooKeeper and ask the servers;
 * moving a region's primary and decommissioning a server are requests the active master carries out
 * (znodes under {@code /kvs/<cluster>/admin/}, see {@link io.kvs.core.cluster.ClusterPaths}), with
 * the steps of failure recovery, so they survive a master failover and lose nothing.
 */
package io.kvs.tools.admin;
