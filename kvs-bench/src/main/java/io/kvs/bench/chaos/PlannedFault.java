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
 */
record PlannedFault(FaultKind kind, Target target, long holdMillis, long salt) {
  @Override
  public String toString() {
    return kind.label + " " + target + (holdMillis > 0 ? " for " + holdMillis + " ms" : "");
  }
}
