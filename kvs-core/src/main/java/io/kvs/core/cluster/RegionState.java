package io.kvs.core.cluster;

/** Where a region is in its lifecycle, as the master records it. */
public enum RegionState {
  /** Assigned (at this epoch); the master is opening it on its replica group. */
  OPENING,
  /** Its primary and every backup opened it at this epoch: it serves. */
  OPEN,
  /** Its primary is gone and no replacement has been opened yet: requests fail and are retried. */
  OFFLINE
}
