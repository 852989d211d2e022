package io.kvs.bench.history;

import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Operation.Outcome;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The operations on one key, modelled as a register whose states are numbered: {@link #ABSENT},
 * {@link #INITIAL} (the key's initial value, if it has one) and one state per PUT. Values are
 * unique, so a read's value names the one state it must have seen ({@link #want}).
 */
final class KeyHistory {
  /** The key is absent: initially (unless it has an initial value) or after a DELETE. */
  static final int ABSENT = 0;

  /** The key holds its initial value. */
  static final int INITIAL = 1;

  final Bytes key;
  final Bytes initialValue;
  final List<Operation> operations;

  /** GETs that succeeded, by invoke time. */
  final List<Operation> reads = new ArrayList<>();

  /** PUTs and DELETEs that may have taken effect (OK or UNKNOWN), by invoke time. */
  final List<Operation> writes = new ArrayList<>();

  /** The states a PUT state's index stands for: index {@code s} is written by {@code puts[s]}. */
  private final List<Operation> putOfState = new ArrayList<>();

  private final Map<Bytes, Integer> stateOfValue = new HashMap<>();

  /** Every PUT of the whole history by value, to explain reads of values foreign to this key. */
  final Map<Bytes, Operation> putsByValue;

  /**
   * @param initialValue the key's value before the history, null if absent
   * @param putsByValue every PUT of the history, by the (unique) value it writes
   */
  KeyHistory(
      Bytes key,
      Bytes initialValue,
      List<Operation> operations,
      Map<Bytes, Operation> putsByValue) {
    this.key = key;
    this.initialValue = initialValue;
    this.operations = operations;
    this.putsByValue = putsByValue;
    putOfState.add(null);
    putOfState.add(null);
    List<Operation> sorted = new ArrayList<>(operations);
    sorted.sort(Comparator.comparingLong(Operation::invokeNanos).thenComparing(Operation::id));
    for (Operation op : sorted) {
      if (op.kind() == Kind.GET) {
        if (op.outcome() == Outcome.OK) {
          reads.add(op);
        }
      } else if (op.outcome() != Outcome.FAILED_NOT_APPLIED) {
        writes.add(op);
        if (op.kind() == Kind.PUT || op.kind() == Kind.CAS) {
          stateOfValue.put(op.value(), putOfState.size());
          putOfState.add(op);
        }
      }
    }
  }

  /** The number of states: state indexes are below this. */
  int stateCount() {
    return putOfState.size();
  }

  /** The state no write produces: what a read of a value this key never held wants. */
  int unwritten() {
    return putOfState.size();
  }

  /** The state the key starts in. */
  int initialState() {
    return initialValue == null ? ABSENT : INITIAL;
  }

  /** The state a write produces. */
  int produces(Operation write) {
    return write.kind() == Kind.DELETE ? ABSENT : stateOfValue.get(write.value());
  }

  /**
   * The state a CAS requires (the one its expected value names, {@link #unwritten()} if no write
   * here produces it); -1 for an operation that requires none.
   */
  int requires(Operation op) {
    if (op.kind() != Kind.CAS) {
      return -1;
    }
    if (op.expected() == null) {
      return ABSENT;
    }
    if (op.expected().equals(initialValue)) {
      return INITIAL;
    }
    return stateOfValue.getOrDefault(op.expected(), unwritten());
  }

  /** The state a successful read saw, or {@link #unwritten()} if no write here produces it. */
  int want(Operation read) {
    if (read.value() == null) {
      return ABSENT;
    }
    if (read.value().equals(initialValue)) {
      return INITIAL;
    }
    return stateOfValue.getOrDefault(read.value(), unwritten());
  }

  /** The PUT that writes state {@code state}; null for ABSENT, INITIAL and unwritten. */
  Operation putOf(int state) {
    return state < putOfState.size() ? putOfState.get(state) : null;
  }

  /**
   * When the write producing {@code state} surely took effect by: -infinity for the initial value,
   * +infinity for absent (a DELETE may come any time) and for UNKNOWN PUTs.
   */
  long surelyDoneBy(int state) {
    if (state == INITIAL) {
      return Long.MIN_VALUE;
    }
    Operation put = putOf(state);
    return put == null || put.outcome() == Outcome.UNKNOWN ? Long.MAX_VALUE : put.completeNanos();
  }

  /**
   * An operation the search orders: it takes effect between its invoke and {@code deadline}, or, if
   * {@code optional}, possibly never.
   */
  record Step(Operation op, long deadline, boolean optional) {}

  /**
   * The operations the search must order, by invoke time. Uncertain writes are reshaped without
   * changing whether an order exists:
   *
   * <ul>
   *   <li>an UNKNOWN PUT or CAS whose value nobody read (no read returned it, no acknowledged CAS
   *       expected it) is left out: linearized, it could only be overwritten before the next read,
   *       so leaving it out changes no read;
   *   <li>an UNKNOWN PUT or CAS that was read must take effect before its first reader completed,
   *       so that becomes its deadline: it is then an ordinary operation (a CAS keeps its
   *       precondition);
   *   <li>an UNKNOWN DELETE is left out if no read returned absent after its invoke (same reason),
   *       else it is optional with the last such read's completion as deadline: taking effect after
   *       every read of absent, it would be as good as left out.
   * </ul>
   */
  List<Step> searchSteps() {
    // The earliest completion of a read of each state; the latest of a read of absent.
    long[] firstReadDone = new long[stateCount() + 1];
    Arrays.fill(firstReadDone, Long.MAX_VALUE);
    long lastAbsentReadDone = Long.MIN_VALUE;
    List<Step> steps = new ArrayList<>();
    for (Operation read : reads) {
      steps.add(new Step(read, read.completeNanos(), false));
      int want = want(read);
      firstReadDone[want] = Math.min(firstReadDone[want], read.completeNanos());
      if (want == ABSENT) {
        lastAbsentReadDone = Math.max(lastAbsentReadDone, read.completeNanos());
      }
    }
    // A CAS that took effect read the state it required, by its deadline: an acknowledged one by
    // its completion, an UNKNOWN one whose value was read by its first reader's -- which may make
    // the UNKNOWN write of that state read in turn, so this runs until nothing changes (at most
    // once per CAS).
    boolean changed = true;
    while (changed) {
      changed = false;
      for (Operation write : writes) {
        int required = requires(write);
        if (required < 0) {
          continue;
        }
        long deadline =
            write.outcome() == Outcome.OK
                ? write.completeNanos()
                : Math.max(firstReadDone[produces(write)], write.invokeNanos());
        if (deadline == Long.MAX_VALUE) {
          continue; // an UNKNOWN CAS nobody read: left out below
        }
        if (deadline < firstReadDone[required]) {
          firstReadDone[required] = deadline;
          changed = true;
        }
        if (required == ABSENT && deadline > lastAbsentReadDone) {
          lastAbsentReadDone = deadline;
          changed = true;
        }
      }
    }
    for (Operation write : writes) {
      if (write.outcome() == Outcome.OK) {
        steps.add(new Step(write, write.completeNanos(), false));
      } else if (write.kind() == Kind.PUT || write.kind() == Kind.CAS) {
        long firstRead = firstReadDone[produces(write)];
        if (firstRead != Long.MAX_VALUE) {
          // Read before it was invoked? Then the search rules that out by itself.
          steps.add(new Step(write, Math.max(firstRead, write.invokeNanos()), false));
        }
      } else if (lastAbsentReadDone >= write.invokeNanos()) {
        steps.add(new Step(write, lastAbsentReadDone, true));
      }
    }
    steps.sort(
        Comparator.comparingLong((Step step) -> step.op().invokeNanos())
            .thenComparingLong(step -> step.op().id()));
    return steps;
  }

  /** "the value of PUT#7", "the initial value", "absent". */
  String describeState(int state) {
    if (state == ABSENT) {
      return "absent";
    }
    if (state == INITIAL) {
      return "the initial value " + initialValue;
    }
    Operation put = putOf(state);
    return put == null ? "a value no write on this key produced" : "the value of " + put.name();
  }
}
