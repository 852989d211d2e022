package io.kvs.master.status;

import java.util.List;

/**
 * One recovery of a region as the active master saw it: from the pass that began it to the one that
 * found the group whole again (or to the end of this master's leadership).
 *
 * @param regionId the region
 * @param steps what happened, in order ({@code member gone: ...}, {@code backup promoted: ...},
 *     {@code re-replicated: ...}, {@code reopened: ...}, {@code offline: ...}); at most {@link
 *     RecoveryLog#STEPS_LIMIT}, later ones counted in {@code stepsDropped}
 * @param stepsDropped steps left out beyond the limit
 * @param startedAtMillis when it began (milliseconds since the epoch)
 * @param endedAtMillis when it ended, 0 while it is in progress
 * @param outcome {@link #IN_PROGRESS}, {@link #RECOVERED} or {@link #ABANDONED}
 */
public record Recovery(
    long regionId,
    List<String> steps,
    int stepsDropped,
    long startedAtMillis,
    long endedAtMillis,
    String outcome) {
  /** Still under way. */
  public static final String IN_PROGRESS = "in progress";

  /** The group is whole again: every member holds the region, none joining. */
  public static final String RECOVERED = "recovered";

  /** This master stopped leading (or stopped) before it ended; its successor carries it on. */
  public static final String ABANDONED = "abandoned";

  public Recovery {
    steps = List.copyOf(steps);
  }

  /** How long it took, or has taken so far at {@code nowMillis}. */
  public long durationMillis(long nowMillis) {
    return (endedAtMillis == 0 ? nowMillis : endedAtMillis) - startedAtMillis;
  }

  /** Whether it is still under way. */
  public boolean inProgress() {
    return endedAtMillis == 0;
  }
}
