package io.kvs.bench.history;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * What the {@link LinearizabilityChecker} concluded about a {@link History}.
 *
 * @param result linearizable, not, or unknown (some key's search ran out of budget and no key was
 *     found violated): never LINEARIZABLE unless every key was proven linearizable
 * @param findings the keys that are not proven linearizable, by key
 * @param lostWrites acknowledged writes a key's final read does not show, by key; each is also a
 *     violation of its key
 * @param keys the number of keys checked
 * @param operations the number of operations in the history
 * @param statesExplored the search configurations explored, all keys together
 * @param elapsedNanos how long the check took
 * @param originNanos the history's earliest invoke: explanations give times in ms since then
 */
public record Verdict(
    Result result,
    List<KeyFinding> findings,
    List<LostWrite> lostWrites,
    int keys,
    int operations,
    long statesExplored,
    long elapsedNanos,
    long originNanos) {

  /** The overall answer. */
  public enum Result {
    /** Every key is linearizable. */
    LINEARIZABLE,
    /** At least one key is proven not linearizable. */
    NOT_LINEARIZABLE,
    /** No key is proven violated, but at least one could not be decided within the budget. */
    UNKNOWN
  }

  /**
   * A key that is not proven linearizable.
   *
   * @param key the key
   * @param kind violated, or undecided within the budget
   * @param explanation for humans: names the key and the operations involved with their intervals
   * @param involved the operations of the explanation
   * @param statesExplored the configurations the search explored for this key (0 if a direct proof
   *     needed no search)
   */
  public record KeyFinding(
      Bytes key, Kind kind, String explanation, List<Operation> involved, long statesExplored) {

    /** What was found. */
    public enum Kind {
      /** Not linearizable. */
      VIOLATION,
      /** Undecided: the search explored its whole budget of configurations. */
      BUDGET_EXHAUSTED
    }

    /** Copies the list. */
    public KeyFinding {
      involved = List.copyOf(involved);
    }
  }

  /**
   * An acknowledged write that the key's final read (the last read, invoked after every
   * acknowledged write on the key had completed) does not show.
   *
   * @param key the key
   * @param write the last acknowledged write that the final read proves lost
   * @param finalRead the final read
   * @param explanation for humans
   */
  public record LostWrite(Bytes key, Operation write, Operation finalRead, String explanation) {}

  /** Copies the lists. */
  public Verdict {
    findings = List.copyOf(findings);
    lostWrites = List.copyOf(lostWrites);
  }

  /** True only if every key was proven linearizable. */
  public boolean isLinearizable() {
    return result == Result.LINEARIZABLE;
  }

  /** The finding about {@code key}, if any. */
  public Optional<KeyFinding> finding(Bytes key) {
    return findings.stream().filter(f -> f.key().equals(key)).findFirst();
  }

  /** One line: the result and the counts. */
  public String summary() {
    long violated = findings.stream().filter(f -> f.kind() == KeyFinding.Kind.VIOLATION).count();
    long undecided = findings.size() - violated;
    return String.format(
        Locale.ROOT,
        "%s: %d operations on %d keys (%d violated, %d undecided, %d acknowledged writes lost),"
            + " %d states explored in %.1f ms",
        result,
        operations,
        keys,
        violated,
        undecided,
        lostWrites.size(),
        statesExplored,
        elapsedNanos / 1e6);
  }

  /** The summary, then every finding and lost write with its operations, one per line. */
  public String describe() {
    StringBuilder out = new StringBuilder(summary());
    for (KeyFinding finding : findings) {
      out.append("\n").append(finding.kind()).append(": ").append(finding.explanation());
      for (Operation op : finding.involved()) {
        out.append("\n    ").append(op.describe(originNanos));
      }
    }
    for (LostWrite lost : lostWrites) {
      out.append("\nLOST WRITE: ").append(lost.explanation());
    }
    return out.toString();
  }

  @Override
  public String toString() {
    return describe();
  }
}
