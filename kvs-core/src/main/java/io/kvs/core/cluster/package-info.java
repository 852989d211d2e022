/**
 * Cluster metadata shared by the master, the region servers and the client: the servers, the
 * regions (key range, replica group, epoch) and the region map built from them, the cluster
 * configuration, where each lives in ZooKeeper ({@link io.kvs.core.cluster.ClusterPaths}) and its
 * JSON form there ({@link io.kvs.core.cluster.ClusterJson}). docs/ARCHITECTURE.md, "Cluster
 * metadata", describes the layout.
 */
package io.kvs.core.cluster;
