package io.kvs.core.cluster;

/** What a region server is for a region it holds. */
public enum RegionRole {
  /** Serves the region's reads and writes and replicates its writes to the backups. */
  PRIMARY,
  /** Holds a replica of the region's data; serves no client request. */
  BACKUP
}
