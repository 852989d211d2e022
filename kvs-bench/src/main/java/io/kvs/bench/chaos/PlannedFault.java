package io.kvs.bench.chaos;

/**
 * One fault of the schedule: what, whom, and for how long.
 *
 * @param kind the kind
 * @param target whom it hits
 * @param holdMillis how long it lasts before it is healed (for planned changes: how long a drained
 *     server stays out before it is recommissioned; 0 for moves and balancing, which last until the
 *     master carried them out)
 * @param salt seeds what the fault draws itself (garbage bytes)
 * @param thenKill for a replication cut: its primary is killed (SIGKILL) at the end of the hold,
 *     while still cut off, and restarted when the cut heals (a partition, then a crash)
 */
record PlannedFault(FaultKind kind, Target target, long holdMillis, long salt, boolean thenKill) {
  @Override
  public String toString() {
    return kind.label
        + " "
        + target
        + (holdMillis > 0 ? " for " + holdMillis + " ms" : "")
        + (thenKill ? ", then its primary killed" : "");
  }
}
