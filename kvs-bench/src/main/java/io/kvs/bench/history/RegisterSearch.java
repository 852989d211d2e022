package io.kvs.bench.history;

import io.kvs.bench.history.Operation.Kind;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Searches for a linearization of one key's history: the Wing &amp; Gong search over the call and
 * return events with Lowe's memoisation (as in Porcupine): a configuration (set of operations done,
 * register state) is explored at most once. Complete and exact: it answers {@link Result#VIOLATION}
 * only after every configuration was ruled out, and {@link Result#BUDGET_EXHAUSTED} (never a guess)
 * once more than the budget's configurations were explored.
 *
 * <p>It orders {@link KeyHistory#searchSteps()}, where uncertain writes are already reshaped.
 *
 * <p>Values are unique, so a write must not replace a value some pending read (or acknowledged CAS,
 * whose precondition is a read) still has to see (it could never come back): that cuts most
 * branches of the search. A CAS takes effect only in the state it requires.
 */
final class RegisterSearch {
  enum Result {
    LINEARIZABLE,
    VIOLATION,
    BUDGET_EXHAUSTED
  }

  private static final int NIL = -1;
  private static final int MAX_WAITING = 3;

  private final KeyHistory history;
  private final long budget;
  private final Operation[] ops;
  private final boolean[] isRead;
  private final boolean[] optional;

  /** For a write the state it produces, for a read the state it must see. */
  private final int[] value;

  /** For a CAS the state it requires to take effect; -1 for every other operation. */
  private final int[] pre;

  /** Whether an operation must see {@link #pre}: an acknowledged CAS (not an optional one). */
  private final boolean[] preRead;

  private final long[] zobrist;

  // The event list: entry 2i is operation i's call, 2i+1 its return; head is entry 2n.
  private final int[] next;
  private final int[] prev;
  private final int[] position;
  private final int head;

  private final long[] done;
  private long doneHash;
  private int lowestNotDone;
  private int highestDone = -1;
  private final int[] pendingReaders;
  private int pendingDeletes;
  private final Set<Config> explored = new HashSet<>();

  private final int[] stackOp;
  private final int[] stackState;
  private final boolean[] stackSkipped;
  private int top;
  private int doneCount;
  private int state;

  private int stuckOp = -1;
  private int stuckState;
  private int stuckPosition = -1;
  private int stuckDoneCount;
  private final List<Operation> stuckWaiting = new ArrayList<>();

  RegisterSearch(KeyHistory history, long budget) {
    this.history = history;
    this.budget = budget;
    List<KeyHistory.Step> chosen = history.searchSteps();
    int n = chosen.size();
    ops = new Operation[n];
    isRead = new boolean[n];
    optional = new boolean[n];
    value = new int[n];
    pre = new int[n];
    preRead = new boolean[n];
    long[] deadline = new long[n];
    zobrist = new long[n];
    SplittableRandom random = new SplittableRandom(n);
    for (int i = 0; i < n; i++) {
      ops[i] = chosen.get(i).op();
      deadline[i] = chosen.get(i).deadline();
      optional[i] = chosen.get(i).optional();
      isRead[i] = ops[i].kind() == Kind.GET;
      value[i] = isRead[i] ? history.want(ops[i]) : history.produces(ops[i]);
      pre[i] = history.requires(ops[i]);
      preRead[i] = pre[i] >= 0 && !optional[i];
      zobrist[i] = random.nextLong();
    }
    pendingReaders = new int[history.stateCount() + 1];
    for (int i = 0; i < n; i++) {
      if (isRead[i]) {
        pendingReaders[value[i]]++;
      } else if (value[i] == KeyHistory.ABSENT) {
        pendingDeletes++;
      }
      if (preRead[i]) {
        pendingReaders[pre[i]]++;
      }
    }
    done = new long[(n + 63) >>> 6];
    stackOp = new int[n];
    stackState = new int[n];
    stackSkipped = new boolean[n];
    state = history.initialState();
    // Events by time; at equal times calls first, so touching intervals count as concurrent.
    Integer[] events = new Integer[2 * n];
    Arrays.setAll(events, e -> e);
    Arrays.sort(
        events,
        Comparator.comparingLong(
                (Integer e) -> (e & 1) == 0 ? ops[e >> 1].invokeNanos() : deadline[e >> 1])
            .thenComparingInt(e -> e & 1)
            .thenComparingInt(e -> e >> 1));
    head = 2 * n;
    next = new int[2 * n + 1];
    prev = new int[2 * n + 1];
    position = new int[2 * n];
    int last = head;
    for (int p = 0; p < 2 * n; p++) {
      int e = events[p];
      position[e] = p;
      next[last] = e;
      prev[e] = last;
      last = e;
    }
    next[last] = NIL;
  }

  /**
   * Runs the search.
   *
   * @return LINEARIZABLE with an order found; VIOLATION after ruling out every order; or
   *     BUDGET_EXHAUSTED once more than the budget's configurations were explored
   */
  Result run() {
    int e = next[head];
    while (doneCount < ops.length) {
      if (e == NIL) {
        // Cannot happen: while operations remain, so does a return event, and it stops the scan.
        throw new IllegalStateException("event list exhausted with operations left");
      }
      int op = e >> 1;
      boolean stepped;
      if ((e & 1) == 0) {
        // A call: try to let the operation take effect now, else look at the next event.
        stepped = canTakeEffect(op) && step(op, false);
        if (!stepped) {
          e = next[e];
        }
      } else {
        // The return of an operation not done yet: skip it if optional, else back up.
        stepped = optional[op] && step(op, true);
        if (!stepped) {
          noteStuck(e, op);
          e = backtrack();
          if (e == NIL) {
            return Result.VIOLATION;
          }
        }
      }
      if (stepped) {
        if (explored.size() > budget) {
          return Result.BUDGET_EXHAUSTED;
        }
        e = next[head];
      }
    }
    return Result.LINEARIZABLE;
  }

  /** False if {@code op} cannot take effect in the current state (or would doom the search). */
  private boolean canTakeEffect(int op) {
    if (isRead[op]) {
      return value[op] == state;
    }
    if (pre[op] >= 0 && pre[op] != state) {
      return false; // a CAS writes only over the value it expected
    }
    if (value[op] == state) {
      return true; // a DELETE of an absent key destroys nothing
    }
    // Replacing a value that a pending read (or acknowledged CAS, this one aside) must still see
    // dooms the search: unique values never come back, and absent only comes back if a DELETE is
    // still pending.
    int readers = pendingReaders[state] - (preRead[op] ? 1 : 0);
    return readers == 0 || (state == KeyHistory.ABSENT && pendingDeletes > 0);
  }

  /**
   * Lets {@code op} take effect (or, if {@code skip}, never take effect) unless the configuration
   * this leads to was explored already; returns whether it did.
   */
  private boolean step(int op, boolean skip) {
    int newState = skip || isRead[op] ? state : value[op];
    setDone(op);
    if (!explored.add(new Config(this, newState))) {
      clearDone(op);
      return false;
    }
    stackOp[top] = op;
    stackState[top] = state;
    stackSkipped[top] = skip;
    top++;
    account(op, 1);
    lift(op);
    state = newState;
    return true;
  }

  /** Undoes steps up to the last one that took effect; returns the event to try next, or NIL. */
  private int backtrack() {
    while (top > 0) {
      top--;
      int op = stackOp[top];
      state = stackState[top];
      unlift(op);
      clearDone(op);
      account(op, -1);
      if (!stackSkipped[top]) {
        return next[2 * op];
      }
      // A skip was tried at its return, the last chance: back up further.
    }
    return NIL;
  }

  private void account(int op, int delta) {
    doneCount += delta;
    if (isRead[op]) {
      pendingReaders[value[op]] -= delta;
    } else if (value[op] == KeyHistory.ABSENT) {
      pendingDeletes -= delta;
    }
    if (preRead[op]) {
      pendingReaders[pre[op]] -= delta;
    }
  }

  /** Remembers the latest return event the search got stuck at, for the explanation. */
  private void noteStuck(int returnEvent, int op) {
    if (position[returnEvent] > stuckPosition) {
      stuckPosition = position[returnEvent];
      stuckOp = op;
      stuckState = state;
      stuckDoneCount = doneCount;
      // The reads (and acknowledged CASes) still to see the state held: why no write could
      // replace it there.
      stuckWaiting.clear();
      for (int i = lowestNotDone; i < ops.length && stuckWaiting.size() < MAX_WAITING; i++) {
        boolean sees = (isRead[i] && value[i] == state) || (preRead[i] && pre[i] == state);
        if (sees && !isDone(i) && i != op) {
          stuckWaiting.add(ops[i]);
        }
      }
    }
  }

  // Dancing links: lifts undone in reverse order restore the list exactly.
  private void lift(int op) {
    int call = 2 * op;
    int ret = call + 1;
    next[prev[call]] = next[call];
    prev[next[call]] = prev[call];
    next[prev[ret]] = next[ret];
    if (next[ret] != NIL) {
      prev[next[ret]] = prev[ret];
    }
  }

  private void unlift(int op) {
    int call = 2 * op;
    int ret = call + 1;
    next[prev[ret]] = ret;
    if (next[ret] != NIL) {
      prev[next[ret]] = ret;
    }
    next[prev[call]] = call;
    prev[next[call]] = call;
  }

  private boolean isDone(int op) {
    return (done[op >>> 6] & (1L << op)) != 0;
  }

  private void setDone(int op) {
    done[op >>> 6] |= 1L << op;
    doneHash ^= zobrist[op];
    highestDone = Math.max(highestDone, op);
    while (lowestNotDone < ops.length && isDone(lowestNotDone)) {
      lowestNotDone++;
    }
  }

  private void clearDone(int op) {
    done[op >>> 6] &= ~(1L << op);
    doneHash ^= zobrist[op];
    lowestNotDone = Math.min(lowestNotDone, op);
    // Every operation below lowestNotDone is done, so this scan stops within the window.
    while (highestDone >= 0 && !isDone(highestDone)) {
      highestDone--;
    }
  }

  /** Configurations explored so far. */
  long exploredCount() {
    return explored.size();
  }

  /** The number of operations the search orders (after reshaping uncertain writes). */
  int size() {
    return ops.length;
  }

  /** The operation whose completion the search could least get past; null if it never stuck. */
  Operation stuckOperation() {
    return stuckOp < 0 ? null : ops[stuckOp];
  }

  /** The register state when the search got stuck there. */
  int stuckState() {
    return stuckState;
  }

  /** Some reads (or CASes), not yet ordered then, that returned (expected) the state held there. */
  List<Operation> stuckWaiting() {
    return stuckWaiting;
  }

  /** How many operations were ordered when the search got stuck there. */
  int stuckDoneCount() {
    return stuckDoneCount;
  }

  /**
   * A configuration: the register state and the set of operations done, stored as the first
   * operation not done plus the bit words from there to the last done one (everything below is
   * done). Compact, since done sets are a prefix plus a window about as wide as the concurrency.
   */
  private static final class Config {
    private final long hash;
    private final int state;
    private final int fromWord;
    private final long[] words;

    Config(RegisterSearch search, int state) {
      this.state = state;
      this.hash = search.doneHash * 0x9E3779B97F4A7C15L + state;
      this.fromWord = search.lowestNotDone >>> 6;
      int toWord = search.highestDone >>> 6;
      this.words =
          search.highestDone < 0 || toWord < fromWord
              ? new long[0]
              : Arrays.copyOfRange(search.done, fromWord, toWord + 1);
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof Config that
          && hash == that.hash
          && state == that.state
          && fromWord == that.fromWord
          && Arrays.equals(words, that.words);
    }

    @Override
    public int hashCode() {
      return Long.hashCode(hash);
    }
  }
}
