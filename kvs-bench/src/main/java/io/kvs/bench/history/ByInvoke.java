package io.kvs.bench.history;

import java.util.List;

/**
 * Operations sorted by invoke time, answering "of those invoked after t, which completes first" in
 * O(log n): suffix minima of the completion times. For reads it also keeps, per suffix, the first
 * to complete among those that saw a different state than the first one, so "the first to complete
 * that did not see state s" is O(log n) too.
 */
final class ByInvoke {
  private final List<Operation> ops;
  private final long[] invokes;
  private final int[] states;
  private final int[] first;
  private final int[] firstOther;

  /**
   * @param sortedByInvoke the operations, by invoke time
   * @param history for reads, the key whose states they saw; null for writes
   */
  ByInvoke(List<Operation> sortedByInvoke, KeyHistory history) {
    this.ops = sortedByInvoke;
    int n = ops.size();
    invokes = new long[n];
    states = new int[n];
    first = new int[n + 1];
    firstOther = new int[n + 1];
    first[n] = -1;
    firstOther[n] = -1;
    for (int i = 0; i < n; i++) {
      invokes[i] = ops.get(i).invokeNanos();
      states[i] = history == null ? 0 : history.want(ops.get(i));
    }
    for (int i = n - 1; i >= 0; i--) {
      // The suffix's best two come from {i, best of i+1, best other of i+1}.
      int[] candidates = {i, first[i + 1], firstOther[i + 1]};
      int best = -1;
      for (int c : candidates) {
        if (c >= 0 && (best < 0 || completes(c) < completes(best))) {
          best = c;
        }
      }
      int other = -1;
      for (int c : candidates) {
        if (c >= 0 && states[c] != states[best] && (other < 0 || completes(c) < completes(other))) {
          other = c;
        }
      }
      first[i] = best;
      firstOther[i] = other;
    }
  }

  private long completes(int i) {
    Operation op = ops.get(i);
    return op.outcome() == Operation.Outcome.UNKNOWN ? Long.MAX_VALUE : op.completeNanos();
  }

  /** Of the operations invoked strictly after {@code after}, the first to complete, or null. */
  Operation firstToComplete(long after) {
    int i = firstInvokedAfter(after);
    return first[i] < 0 ? null : ops.get(first[i]);
  }

  /**
   * Of the reads invoked strictly after {@code after} that did not see {@code state}, the first to
   * complete, or null.
   */
  Operation firstToCompleteOther(long after, int state) {
    int i = firstInvokedAfter(after);
    int best = first[i];
    if (best >= 0 && states[best] == state) {
      best = firstOther[i];
    }
    return best < 0 ? null : ops.get(best);
  }

  private int firstInvokedAfter(long after) {
    int lo = 0;
    int hi = invokes.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (invokes[mid] > after) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo;
  }
}
