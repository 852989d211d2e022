package io.kvs.bench.chaos;

/**
 * One step of the schedule: a fault, sometimes a second one of another family injected while the
 * first lasts, then (once both are healed and the cluster is back at full strength) a pause.
 *
 * @param number 1, 2, ... in schedule order
 * @param main the fault
 * @param overlap the overlapping fault, or null
 * @param overlapDelayMillis how long after the main fault the overlapping one is injected
 * @param gapMillis the pause after the cluster is back at full strength
 */
record Step(
    int number, PlannedFault main, PlannedFault overlap, long overlapDelayMillis, long gapMillis) {
  @Override
  public String toString() {
    return "step "
        + number
        + ": "
        + main
        + (overlap == null
            ? ""
            : ", with " + overlap + " from " + overlapDelayMillis + " ms after it");
  }
}
