package io.kvs.core.control;

import io.kvs.core.cluster.RegionRole;

/**
 * A region a server holds: at which epoch, in which role.
 *
 * @param caughtUp for a primary: its backups all hold every write it acknowledged (its replication
 *     stream is healthy and its catch-up done), so each may be promoted; false for a backup
 * @param replicationFailed for a primary: its replication stream failed (its writes fail until the
 *     master opens the region again)
 */
public record HeldRegion(
    long regionId, long epoch, RegionRole role, boolean caughtUp, boolean replicationFailed) {
  public HeldRegion(long regionId, long epoch, RegionRole role) {
    this(regionId, epoch, role, false, false);
  }
}
