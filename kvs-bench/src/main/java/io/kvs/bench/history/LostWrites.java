package io.kvs.bench.history;

import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Operation.Outcome;

/**
 * Finds an acknowledged write that a key's final read proves lost. The final read is the last
 * successful read, if it was invoked after every acknowledged write on the key completed (a fault
 * test's verification pass). A write W is lost if the value the read returned surely took effect
 * before W was invoked (for absent: every DELETE that could explain it, and the initial absent,
 * did), so W must have replaced it before the read began. Reads of values never written are
 * violations but not evidence of which write was lost; they are left to the other checks.
 */
final class LostWrites {
  private LostWrites() {}

  /** The lost write of {@code h} with the latest completion, or null. */
  static Verdict.LostWrite find(KeyHistory h, long originNanos) {
    if (h.reads.isEmpty()) {
      return null;
    }
    long lastAcknowledged = Long.MIN_VALUE;
    for (Operation w : h.writes) {
      if (w.outcome() == Outcome.OK) {
        lastAcknowledged = Math.max(lastAcknowledged, w.completeNanos());
      }
    }
    Operation read = h.reads.get(h.reads.size() - 1);
    int want = h.want(read);
    if (lastAcknowledged == Long.MIN_VALUE
        || read.invokeNanos() <= lastAcknowledged
        || want == h.unwritten()) {
      return null;
    }
    long sourceDone;
    if (want == KeyHistory.ABSENT) {
      sourceDone = Long.MIN_VALUE;
      for (Operation w : h.writes) {
        if (w.kind() == Kind.DELETE && w.invokeNanos() <= read.completeNanos()) {
          long doneBy = w.outcome() == Outcome.UNKNOWN ? Long.MAX_VALUE : w.completeNanos();
          sourceDone = Math.max(sourceDone, doneBy);
        }
      }
    } else {
      sourceDone = h.surelyDoneBy(want);
    }
    Operation lost = null;
    for (Operation w : h.writes) {
      boolean replaces = want != KeyHistory.ABSENT || w.kind() != Kind.DELETE;
      if (w.outcome() == Outcome.OK
          && replaces
          && w.invokeNanos() > sourceDone
          && (lost == null || w.completeNanos() > lost.completeNanos())) {
        lost = w;
      }
    }
    if (lost == null) {
      return null;
    }
    String explanation =
        "key "
            + h.key
            + ": acknowledged "
            + lost.name()
            + " (completed at "
            + Operation.millis(lost.completeNanos(), originNanos)
            + ") is not visible to the final read "
            + read.name()
            + " (invoked at "
            + Operation.millis(read.invokeNanos(), originNanos)
            + "), which returned "
            + h.describeState(want)
            + "; that state took effect before "
            + lost.name()
            + " was invoked, so "
            + lost.name()
            + " should have replaced it";
    return new Verdict.LostWrite(h.key, lost, read, explanation);
  }
}
