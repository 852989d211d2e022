package io.kvs.bench.history;

import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Operation.Outcome;
import java.util.ArrayList;
import java.util.List;

/**
 * Direct evidence that one key's history is not linearizable, found in O(n log n) before the
 * search: each rule is a short proof over at most three operations, so the explanation is exact.
 * Every rule is sound (it fires only on histories the search would reject too), and the checker's
 * tests run the known-bad histories through the search alone as well. The rules, for a successful
 * read R:
 *
 * <ol>
 *   <li>R returned a value no PUT on this key may have written (never written, written to another
 *       key, or written by a PUT that failed without effect);
 *   <li>R returned the value of a PUT invoked after R completed;
 *   <li>stale read: R returned the value of P (or the initial value), but a write W, invoked after
 *       P completed, completed before R was invoked;
 *   <li>R returned absent, but a PUT completed before R was invoked and was invoked after every
 *       DELETE that could explain absent (and the key had no initial value, or was deleted);
 *   <li>non-monotonic reads: R returned P's value, but an earlier read R1 (completed before R was
 *       invoked, invoked after P completed) returned another value: P would have to take effect
 *       after R1 began, yet it had completed before.
 * </ol>
 */
final class Anomalies {
  /** A proven violation: why, and the operations of the proof. */
  record Violation(String reason, List<Operation> involved) {}

  private final KeyHistory h;
  private final long origin;

  private Anomalies(KeyHistory history, long originNanos) {
    this.h = history;
    this.origin = originNanos;
  }

  /** The first violation the rules find in {@code history}, or null. */
  static Violation find(KeyHistory history, long originNanos) {
    return new Anomalies(history, originNanos).find();
  }

  private Violation find() {
    List<Operation> okWrites = new ArrayList<>();
    List<Operation> okPuts = new ArrayList<>();
    List<Operation> deletes = new ArrayList<>();
    for (Operation w : h.writes) {
      if (w.outcome() == Outcome.OK) {
        okWrites.add(w);
        if (w.kind() == Kind.PUT || w.kind() == Kind.CAS) {
          okPuts.add(w);
        }
      }
      if (w.kind() == Kind.DELETE) {
        deletes.add(w);
      }
    }
    for (Operation r : h.reads) {
      Violation v = impossibleValue(r);
      if (v != null) {
        return v;
      }
    }
    ByInvoke writesAfter = new ByInvoke(okWrites, null);
    ByInvoke putsAfter = new ByInvoke(okPuts, null);
    ByInvoke readsAfter = new ByInvoke(h.reads, h);
    for (Operation r : h.reads) {
      int want = h.want(r);
      Violation v = want == KeyHistory.ABSENT ? staleAbsent(r, deletes, putsAfter) : null;
      if (v == null && want != KeyHistory.ABSENT) {
        v = stale(r, want, writesAfter);
      }
      if (v == null && want != KeyHistory.ABSENT) {
        v = nonMonotonic(r, want, readsAfter);
      }
      if (v != null) {
        return v;
      }
    }
    return null;
  }

  /** Rules 1 and 2. */
  private Violation impossibleValue(Operation r) {
    int want = h.want(r);
    if (want == h.unwritten()) {
      Operation put = h.putsByValue.get(r.value());
      String why;
      if (put == null) {
        why = "a value no operation wrote";
      } else if (!put.key().equals(h.key)) {
        why = "a value " + put.name() + " wrote to another key, " + put.key();
      } else {
        why = "the value of " + put.name() + ", which failed without taking effect";
      }
      return violation(
          r.name() + " returned " + r.value() + ": " + why,
          put == null ? List.of(r) : List.of(r, put));
    }
    Operation put = h.putOf(want);
    if (put != null && put.invokeNanos() > r.completeNanos()) {
      return violation(
          r.name()
              + " returned the value of "
              + put.name()
              + ", which was invoked at "
              + at(put.invokeNanos())
              + ", after the read completed at "
              + at(r.completeNanos()),
          List.of(put, r));
    }
    return null;
  }

  /** Rule 3. */
  private Violation stale(Operation r, int want, ByInvoke writesAfter) {
    long sourceDone = h.surelyDoneBy(want);
    Operation w = writesAfter.firstToComplete(sourceDone);
    if (w == null || w.completeNanos() >= r.invokeNanos()) {
      return null;
    }
    Operation put = h.putOf(want);
    String source =
        put == null
            ? "the initial value, but " + w.name()
            : "the value of "
                + put.name()
                + ", but "
                + w.name()
                + ", invoked at "
                + at(w.invokeNanos())
                + " after "
                + put.name()
                + " completed at "
                + at(put.completeNanos())
                + ",";
    return violation(
        "stale read: "
            + r.name()
            + " returned "
            + source
            + " completed at "
            + at(w.completeNanos())
            + ", before the read was invoked at "
            + at(r.invokeNanos())
            + ", so it had replaced that value",
        put == null ? List.of(w, r) : List.of(put, w, r));
  }

  /** Rule 4. */
  private Violation staleAbsent(Operation r, List<Operation> deletes, ByInvoke putsAfter) {
    // The DELETEs that may have taken effect before R: invoked before R completed.
    long lastSourceDone = Long.MIN_VALUE;
    Operation lastSource = null;
    for (Operation d : deletes) {
      if (d.invokeNanos() <= r.completeNanos()) {
        long doneBy = d.outcome() == Outcome.UNKNOWN ? Long.MAX_VALUE : d.completeNanos();
        if (lastSource == null || doneBy > lastSourceDone) {
          lastSourceDone = doneBy;
          lastSource = d;
        }
      }
    }
    if (lastSource == null && h.initialValue != null) {
      return violation(
          r.name()
              + " returned absent, but the key had an initial value and no DELETE was"
              + " invoked before the read completed",
          List.of(r));
    }
    Operation w = putsAfter.firstToComplete(lastSourceDone);
    if (w == null || w.completeNanos() >= r.invokeNanos()) {
      return null;
    }
    String after =
        lastSource == null
            ? "no DELETE was invoked before the read completed"
            : "it was invoked at "
                + at(w.invokeNanos())
                + ", after "
                + lastSource.name()
                + " (the last DELETE that could explain absent) completed";
    return violation(
        "stale read: "
            + r.name()
            + " returned absent, but "
            + w.name()
            + " completed at "
            + at(w.completeNanos())
            + ", before the read was invoked at "
            + at(r.invokeNanos())
            + ", and "
            + after,
        lastSource == null ? List.of(w, r) : List.of(lastSource, w, r));
  }

  /** Rule 5. */
  private Violation nonMonotonic(Operation r, int want, ByInvoke readsAfter) {
    Operation r1 = readsAfter.firstToCompleteOther(h.surelyDoneBy(want), want);
    if (r1 == null || r1.completeNanos() >= r.invokeNanos()) {
      return null;
    }
    Operation put = h.putOf(want);
    String source = put == null ? "the initial value" : "the value of " + put.name();
    return violation(
        "non-monotonic reads: "
            + r1.name()
            + " returned "
            + h.describeState(h.want(r1))
            + " and completed at "
            + at(r1.completeNanos())
            + ", before "
            + r.name()
            + " was invoked at "
            + at(r.invokeNanos())
            + ", yet "
            + r.name()
            + " returned "
            + source
            + (put == null ? "" : ", which had completed at " + at(put.completeNanos()))
            + ", before "
            + r1.name()
            + " was invoked",
        put == null ? List.of(r1, r) : List.of(put, r1, r));
  }

  private Violation violation(String reason, List<Operation> involved) {
    return new Violation("key " + h.key + ": " + reason, involved);
  }

  private String at(long nanos) {
    return Operation.millis(nanos, origin);
  }
}
