package io.kvs.master.status;

import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The recent recoveries of regions, kept in memory for the status page: the reconciler records a
 * step whenever it changes a region's group to repair it, and the end when the group is whole
 * again. Bounded: at most {@link #RECOVERIES_LIMIT} recoveries are kept, the oldest ended one
 * dropped first; recoveries in progress (at most one per region) are never dropped, so while more
 * regions than that recover at once, only those are kept. Each keeps at most {@link #STEPS_LIMIT}
 * steps of at most {@link #STEP_LENGTH_LIMIT} characters (later steps are only counted).
 * Thread-safe.
 */
public final class RecoveryLog {
  /** Recoveries kept, ended and in progress together. */
  public static final int RECOVERIES_LIMIT = 100;

  /** Steps kept per recovery; a region that flaps for long only has its count raised. */
  public static final int STEPS_LIMIT = 16;

  /** Characters kept of one step's text. */
  static final int STEP_LENGTH_LIMIT = 300;

  private final Clock clock;
  private final Deque<Recovery> ended = new ArrayDeque<>();
  private final Map<Long, Recovery> inProgress = new HashMap<>();

  public RecoveryLog() {
    this(Clock.systemUTC());
  }

  RecoveryLog(Clock clock) {
    this.clock = clock;
  }

  /**
   * Records that region {@code regionId}'s recovery took a step ({@code what}, e.g. {@code "backup
   * promoted"}, and a {@code detail} for the operator); begins a recovery if none is under way.
   */
  public synchronized void step(long regionId, String what, String detail) {
    String text = what + ": " + detail;
    if (text.length() > STEP_LENGTH_LIMIT) {
      text = text.substring(0, STEP_LENGTH_LIMIT) + "...";
    }
    Recovery current = inProgress.get(regionId);
    if (current == null) {
      makeRoom();
      inProgress.put(
          regionId,
          new Recovery(regionId, List.of(text), 0, clock.millis(), 0, Recovery.IN_PROGRESS));
      return;
    }
    List<String> steps = current.steps();
    int dropped = current.stepsDropped();
    if (steps.size() < STEPS_LIMIT) {
      steps = new ArrayList<>(steps);
      steps.add(text);
    } else {
      dropped++;
    }
    inProgress.put(
        regionId,
        new Recovery(regionId, steps, dropped, current.startedAtMillis(), 0, Recovery.IN_PROGRESS));
  }

  /** Region {@code regionId}'s group is whole: its recovery, if one is under way, ended well. */
  public synchronized void recovered(long regionId) {
    end(regionId, Recovery.RECOVERED);
  }

  /** Every recovery under way ends as {@link Recovery#ABANDONED} (this master stopped leading). */
  public synchronized void abandonAll() {
    for (Long regionId : List.copyOf(inProgress.keySet())) {
      end(regionId, Recovery.ABANDONED);
    }
  }

  /**
   * Every recovery kept, the ones in progress first (oldest first), then ended ones, newest first.
   */
  public synchronized List<Recovery> recent() {
    List<Recovery> all = new ArrayList<>(inProgress.values());
    all.sort((a, b) -> Long.compare(a.startedAtMillis(), b.startedAtMillis()));
    ended.descendingIterator().forEachRemaining(all::add);
    return all;
  }

  /** The regions whose recovery is under way. */
  public synchronized List<Long> regionsInProgress() {
    return inProgress.keySet().stream().sorted().toList();
  }

  private void end(long regionId, String outcome) {
    Recovery current = inProgress.remove(regionId);
    if (current == null) {
      return;
    }
    ended.addLast(
        new Recovery(
            regionId,
            current.steps(),
            current.stepsDropped(),
            current.startedAtMillis(),
            Math.max(clock.millis(), current.startedAtMillis()),
            outcome));
    trim();
  }

  private void makeRoom() {
    if (ended.size() + inProgress.size() >= RECOVERIES_LIMIT && !ended.isEmpty()) {
      ended.removeFirst();
    }
  }

  private void trim() {
    while (ended.size() + inProgress.size() > RECOVERIES_LIMIT && !ended.isEmpty()) {
      ended.removeFirst();
    }
  }
}
