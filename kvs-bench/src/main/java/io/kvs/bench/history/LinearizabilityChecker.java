package io.kvs.bench.history;

import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Verdict.KeyFinding;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Checks that a {@link History} of PUT, DELETE and GET operations is linearizable: there is one
 * order of the operations that took effect, consistent with real time (an operation that completed
 * before another was invoked comes first), in which every GET returns the value of the last write
 * before it. So no acknowledged write is lost and no read is stale.
 *
 * <p>Linearizability is local, so each key is checked on its own. For each key, direct rules
 * ({@link Anomalies}) first look for a short proof of a violation, which makes the best
 * explanation; if none applies, an exhaustive search ({@link RegisterSearch}) decides. A key's
 * search may explore at most {@link #maxStatesPerKey()} configurations (about 100 bytes each); a
 * key it cannot decide within that is reported as {@link KeyFinding.Kind#BUDGET_EXHAUSTED}, and the
 * history as {@link Verdict.Result#UNKNOWN}, never as linearizable.
 *
 * <p>Contract for the history: every PUT writes a value unique across the whole history (and
 * different from every initial value); times come from one clock. UNKNOWN writes may take effect at
 * any time after their invoke, or never; FAILED_NOT_APPLIED writes never; failed or UNKNOWN GETs
 * are ignored. Keys without an initial value start absent.
 *
 * <p>Instances are immutable and thread-safe; {@code with...} methods return modified copies.
 */
public final class LinearizabilityChecker {
  /** The default bound on the search configurations explored for one key. */
  public static final long DEFAULT_MAX_STATES_PER_KEY = 1_000_000;

  private final Map<Bytes, Bytes> initialValues;
  private final long maxStatesPerKey;
  private final boolean directRules;

  /** A checker with no initial values and the default budget. */
  public LinearizabilityChecker() {
    this(Map.of(), DEFAULT_MAX_STATES_PER_KEY, true);
  }

  private LinearizabilityChecker(
      Map<Bytes, Bytes> initialValues, long maxStatesPerKey, boolean directRules) {
    this.initialValues = Map.copyOf(initialValues);
    this.maxStatesPerKey = maxStatesPerKey;
    this.directRules = directRules;
  }

  /** This checker, with the keys' values before the history (other keys start absent). */
  public LinearizabilityChecker withInitialValues(Map<Bytes, Bytes> values) {
    return new LinearizabilityChecker(values, maxStatesPerKey, directRules);
  }

  /** This checker, exploring at most {@code states} configurations per key. */
  public LinearizabilityChecker withMaxStatesPerKey(long states) {
    if (states < 1) {
      throw new IllegalArgumentException("states " + states + " < 1");
    }
    return new LinearizabilityChecker(initialValues, states, directRules);
  }

  /** This checker without the direct rules: the search alone decides (for the tests). */
  LinearizabilityChecker searchOnly() {
    return new LinearizabilityChecker(initialValues, maxStatesPerKey, false);
  }

  /** The bound on the configurations explored per key. */
  public long maxStatesPerKey() {
    return maxStatesPerKey;
  }

  /**
   * Checks {@code history}.
   *
   * @throws IllegalArgumentException if two PUTs write the same value, or a PUT writes an initial
   *     value: the checker relies on unique values, so that is a bug of the test harness
   */
  public Verdict check(History history) {
    long start = System.nanoTime();
    long origin = history.originNanos();
    Map<Bytes, Operation> putsByValue = putsByValue(history);
    Map<Bytes, List<Operation>> byKey = new TreeMap<>();
    for (Operation op : history.operations()) {
      byKey.computeIfAbsent(op.key(), k -> new ArrayList<>()).add(op);
    }
    List<KeyFinding> findings = new ArrayList<>();
    List<Verdict.LostWrite> lostWrites = new ArrayList<>();
    long states = 0;
    for (Map.Entry<Bytes, List<Operation>> entry : byKey.entrySet()) {
      Bytes key = entry.getKey();
      KeyHistory keyHistory =
          new KeyHistory(key, initialValues.get(key), entry.getValue(), putsByValue);
      Verdict.LostWrite lost = LostWrites.find(keyHistory, origin);
      if (lost != null) {
        lostWrites.add(lost);
      }
      Anomalies.Violation proof = directRules ? Anomalies.find(keyHistory, origin) : null;
      if (proof != null) {
        findings.add(
            new KeyFinding(key, KeyFinding.Kind.VIOLATION, proof.reason(), proof.involved(), 0));
        continue;
      }
      RegisterSearch search = new RegisterSearch(keyHistory, maxStatesPerKey);
      RegisterSearch.Result result = search.run();
      states += search.exploredCount();
      if (result == RegisterSearch.Result.VIOLATION) {
        findings.add(SearchExplanation.of(keyHistory, search, origin));
      } else if (result == RegisterSearch.Result.BUDGET_EXHAUSTED) {
        findings.add(
            new KeyFinding(
                key,
                KeyFinding.Kind.BUDGET_EXHAUSTED,
                "key "
                    + key
                    + ": unknown (search budget exhausted): explored "
                    + search.exploredCount()
                    + " configurations of "
                    + search.size()
                    + " operations without deciding; raise maxStatesPerKey",
                List.of(),
                search.exploredCount()));
      }
    }
    Verdict.Result result =
        findings.stream().anyMatch(f -> f.kind() == KeyFinding.Kind.VIOLATION)
            ? Verdict.Result.NOT_LINEARIZABLE
            : findings.isEmpty() ? Verdict.Result.LINEARIZABLE : Verdict.Result.UNKNOWN;
    return new Verdict(
        result,
        findings,
        lostWrites,
        byKey.size(),
        history.size(),
        states,
        System.nanoTime() - start,
        origin);
  }

  private Map<Bytes, Operation> putsByValue(History history) {
    Map<Bytes, Operation> puts = new HashMap<>();
    Map<Bytes, Bytes> initialKeys = new HashMap<>();
    initialValues.forEach((key, value) -> initialKeys.put(value, key));
    for (Operation op : history.operations()) {
      if (op.kind() != Kind.PUT && op.kind() != Kind.CAS) {
        continue;
      }
      Operation other = puts.putIfAbsent(op.value(), op);
      if (other != null) {
        throw new IllegalArgumentException(
            other.name()
                + " and "
                + op.name()
                + " both write "
                + op.value()
                + ": the checker needs every PUT and CAS to write a unique value");
      }
      if (initialKeys.containsKey(op.value())) {
        throw new IllegalArgumentException(
            op.name()
                + " writes "
                + op.value()
                + ", the initial value of key "
                + initialKeys.get(op.value())
                + ": the checker needs unique values");
      }
    }
    return puts;
  }
}
