package io.kvs.bench.history;

import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Operation.Outcome;
import io.kvs.bench.history.Verdict.KeyFinding;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Explains a failed search: the operation whose completion the search could least get past (the
 * latest point any attempted order reached), the state the key held there, and the operations
 * around it: the writes of the values involved, the last acknowledged writes before it and the
 * operations concurrent with it.
 */
final class SearchExplanation {
  private static final int MAX_CONCURRENT = 10;
  private static final int MAX_PRECEDING_WRITES = 3;

  private SearchExplanation() {}

  static KeyFinding of(KeyHistory h, RegisterSearch search, long origin) {
    Operation stuck = search.stuckOperation();
    int state = search.stuckState();
    String what =
        stuck.kind() == Kind.GET
            ? stuck.name() + " (which returned " + h.describeState(h.want(stuck)) + ")"
            : stuck.name();
    String reason =
        "key "
            + h.key
            + ": not linearizable: no order of its operations consistent with real time lets "
            + what
            + " take effect in time; the furthest the search got was "
            + search.stuckDoneCount()
            + " of "
            + search.size()
            + " operations ordered, with the key holding "
            + h.describeState(state)
            + ", just before "
            + stuck.name()
            + " completed at "
            + Operation.millis(stuck.completeNanos(), origin)
            + waiting(search.stuckWaiting(), h.describeState(state));
    Set<Operation> involved = new LinkedHashSet<>();
    if (stuck.kind() == Kind.GET && h.putOf(h.want(stuck)) != null) {
      involved.add(h.putOf(h.want(stuck)));
    }
    if (h.putOf(state) != null) {
      involved.add(h.putOf(state));
    }
    involved.addAll(search.stuckWaiting());
    List<Operation> before = new ArrayList<>();
    for (Operation w : h.writes) {
      if (w.outcome() == Outcome.OK && w.completeNanos() < stuck.invokeNanos()) {
        before.add(w);
      }
    }
    before.sort(Comparator.comparingLong(Operation::completeNanos).reversed());
    involved.addAll(before.subList(0, Math.min(MAX_PRECEDING_WRITES, before.size())));
    long stuckEnd = end(stuck);
    int concurrent = 0;
    for (Operation op : h.operations) {
      if (concurrent < MAX_CONCURRENT
          && op != stuck
          && op.invokeNanos() <= stuckEnd
          && end(op) >= stuck.invokeNanos()
          && !(op.kind() == Kind.GET && op.outcome() != Outcome.OK)
          && involved.add(op)) {
        concurrent++;
      }
    }
    involved.add(stuck);
    List<Operation> sorted = new ArrayList<>(involved);
    sorted.sort(Comparator.comparingLong(Operation::invokeNanos).thenComparingLong(Operation::id));
    return new KeyFinding(h.key, KeyFinding.Kind.VIOLATION, reason, sorted, search.exploredCount());
  }

  /** ", and no write could replace it: GET#4 and GET#9, not yet ordered, returned it". */
  private static String waiting(List<Operation> reads, String state) {
    if (reads.isEmpty()) {
      return "";
    }
    StringBuilder out = new StringBuilder("; no write could replace ").append(state);
    out.append(" there, since ");
    for (int i = 0; i < reads.size(); i++) {
      out.append(i == 0 ? "" : i == reads.size() - 1 ? " and " : ", ").append(reads.get(i).name());
    }
    boolean expects = reads.stream().anyMatch(op -> op.kind() == Kind.CAS);
    String verb =
        expects
            ? (reads.size() == 1 ? "expects" : "return or expect")
            : (reads.size() == 1 ? "returns" : "return");
    return out.append(", not yet ordered, ").append(verb).append(" it").toString();
  }

  private static long end(Operation op) {
    return op.outcome() == Outcome.UNKNOWN ? Long.MAX_VALUE : op.completeNanos();
  }
}
