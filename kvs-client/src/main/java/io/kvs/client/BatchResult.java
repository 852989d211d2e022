package io.kvs.client;

import io.kvs.core.KvsException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What became of each write of a {@link KvsClient#writeAll} (or {@link KvsClient#putAll}, {@link
 * KvsClient#deleteAll}), by its index in the list given: applied, surely not applied (safe to send
 * again), or unknown (it may have been applied; see {@link OutcomeUnknownException}). Writes of one
 * region that went in one atomic batch share their outcome.
 */
public final class BatchResult {
  /** A write's outcome. */
  public enum Outcome {
    /** A primary applied it and every required backup holds it. */
    APPLIED,
    /** It surely was not applied (refused, or never reached a primary). */
    NOT_APPLIED,
    /** It may or may not have been applied (its request reached a primary, then failed). */
    UNKNOWN
  }

  private final Outcome[] outcomes;
  private final KvsException[] errors;

  BatchResult(Outcome[] outcomes, KvsException[] errors) {
    this.outcomes = outcomes;
    this.errors = errors;
  }

  /** How many writes there were. */
  public int size() {
    return outcomes.length;
  }

  /** The outcome of write {@code index}. */
  public Outcome outcome(int index) {
    return outcomes[index];
  }

  /** Why write {@code index} was not applied, or may not have been; empty if it was applied. */
  public Optional<KvsException> error(int index) {
    return Optional.ofNullable(errors[index]);
  }

  /** Whether every write was applied. */
  public boolean allApplied() {
    return count(Outcome.APPLIED) == outcomes.length;
  }

  /** How many writes had {@code outcome}. */
  public int count(Outcome outcome) {
    int count = 0;
    for (Outcome each : outcomes) {
      count += each == outcome ? 1 : 0;
    }
    return count;
  }

  /** The indexes of the writes that had {@code outcome}, ascending. */
  public List<Integer> indexes(Outcome outcome) {
    List<Integer> indexes = new ArrayList<>();
    for (int i = 0; i < outcomes.length; i++) {
      if (outcomes[i] == outcome) {
        indexes.add(i);
      }
    }
    return indexes;
  }

  @Override
  public String toString() {
    return "BatchResult[applied="
        + count(Outcome.APPLIED)
        + ", notApplied="
        + count(Outcome.NOT_APPLIED)
        + ", unknown="
        + count(Outcome.UNKNOWN)
        + "]";
  }
}
