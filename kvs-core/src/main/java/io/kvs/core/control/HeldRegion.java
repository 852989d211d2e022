package io.kvs.core.control;

import io.kvs.core.cluster.RegionRole;
import java.util.List;

/**
 * A region a server holds: at which epoch, in which role, and for a primary how its backups stand.
 *
 * @param caughtUp for a primary: every backup holds every write it acknowledged (each may be
 *     promoted); false for a backup
 * @param replicationFailed for a primary: the stream to some backup failed (writes that need it
 *     wait until the master opens the region again)
 * @param inSync for a primary: the backups (server ids) that hold every write it acknowledged
 * @param failed for a primary: the backups whose stream failed
 * @param requests for a primary: the client requests its engine region served since it was opened
 *     there (puts, deletes and gets; cumulative: the master's balancer takes rates from it), 0 for
 *     a backup
 * @param joining for a primary: the backups it was opened with as joining (the master counted them
 *     not in sync then). Until it is opened again with one of them in sync, that backup makes no
 *     write durable here (each is synced on the primary's disk too): a master that has recorded it
 *     in sync since opens the region here again.
 * @param bytes for a primary: the key and value bytes its engine region holds (levels and L0,
 *     values in logs counted), what the master splits regions by; 0 for a backup. A daughter of a
 *     split whose levels it still shares with its sibling counts its part of them (estimated from
 *     their indexes)
 */
public record HeldRegion(
    long regionId,
    long epoch,
    RegionRole role,
    boolean caughtUp,
    boolean replicationFailed,
    List<String> inSync,
    List<String> failed,
    long requests,
    List<String> joining,
    long bytes) {
  public HeldRegion {
    inSync = List.copyOf(inSync == null ? List.of() : inSync);
    failed = List.copyOf(failed == null ? List.of() : failed);
    joining = List.copyOf(joining == null ? List.of() : joining);
  }

  public HeldRegion(
      long regionId,
      long epoch,
      RegionRole role,
      boolean caughtUp,
      boolean replicationFailed,
      List<String> inSync,
      List<String> failed,
      long requests) {
    this(
        regionId, epoch, role, caughtUp, replicationFailed, inSync, failed, requests, List.of(), 0);
  }

  public HeldRegion(
      long regionId,
      long epoch,
      RegionRole role,
      boolean caughtUp,
      boolean replicationFailed,
      List<String> inSync,
      List<String> failed) {
    this(regionId, epoch, role, caughtUp, replicationFailed, inSync, failed, 0);
  }

  public HeldRegion(
      long regionId, long epoch, RegionRole role, boolean caughtUp, boolean replicationFailed) {
    this(regionId, epoch, role, caughtUp, replicationFailed, List.of(), List.of());
  }

  public HeldRegion(long regionId, long epoch, RegionRole role) {
    this(regionId, epoch, role, false, false);
  }
}
