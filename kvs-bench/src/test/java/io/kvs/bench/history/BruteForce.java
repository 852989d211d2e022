package io.kvs.bench.history;

import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Operation.Outcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The definition of linearizability, executed literally for small histories: for each key, try
 * every subset of the UNKNOWN writes and every order of the operations consistent with real time.
 * Exponential; the reference the checker is compared with.
 */
final class BruteForce {
  private BruteForce() {}

  static boolean linearizable(History history, Map<Bytes, Bytes> initialValues) {
    return history.keys().stream()
        .allMatch(
            key ->
                keyLinearizable(
                    history.operations().stream().filter(op -> op.key().equals(key)).toList(),
                    initialValues.get(key)));
  }

  private static boolean keyLinearizable(List<Operation> all, Bytes initial) {
    List<Operation> mandatory = new ArrayList<>();
    List<Operation> optional = new ArrayList<>();
    for (Operation op : all) {
      if (op.kind() == Kind.GET) {
        if (op.outcome() == Outcome.OK) {
          mandatory.add(op);
        }
      } else if (op.outcome() == Outcome.OK) {
        mandatory.add(op);
      } else if (op.outcome() == Outcome.UNKNOWN) {
        optional.add(op);
      }
    }
    if (optional.size() > 16) {
      throw new IllegalArgumentException("too many UNKNOWN writes for brute force");
    }
    for (int subset = 0; subset < 1 << optional.size(); subset++) {
      List<Operation> ops = new ArrayList<>(mandatory);
      for (int i = 0; i < optional.size(); i++) {
        if ((subset & (1 << i)) != 0) {
          ops.add(optional.get(i));
        }
      }
      if (order(ops, new boolean[ops.size()], 0, initial)) {
        return true;
      }
    }
    return false;
  }

  /** Whether the operations not yet placed can follow, from {@code state}. */
  private static boolean order(List<Operation> ops, boolean[] placed, int count, Bytes state) {
    if (count == ops.size()) {
      return true;
    }
    for (int i = 0; i < ops.size(); i++) {
      if (placed[i] || !minimal(ops, placed, i)) {
        continue;
      }
      Operation op = ops.get(i);
      Bytes next = state;
      switch (op.kind()) {
        case GET -> {
          if (!Objects.equals(op.value(), state)) {
            continue;
          }
        }
        case PUT -> next = op.value();
        case DELETE -> next = null;
        case CAS -> {
          if (!Objects.equals(op.expected(), state)) {
            continue;
          }
          next = op.value();
        }
      }
      placed[i] = true;
      boolean found = order(ops, placed, count + 1, next);
      placed[i] = false;
      if (found) {
        return true;
      }
    }
    return false;
  }

  /** No other unplaced operation completed before {@code ops[i]} was invoked. */
  private static boolean minimal(List<Operation> ops, boolean[] placed, int i) {
    for (int j = 0; j < ops.size(); j++) {
      if (!placed[j] && j != i && end(ops.get(j)) < ops.get(i).invokeNanos()) {
        return false;
      }
    }
    return true;
  }

  private static long end(Operation op) {
    return op.outcome() == Outcome.UNKNOWN ? Long.MAX_VALUE : op.completeNanos();
  }
}
