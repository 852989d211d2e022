package io.kvs.bench.chaos;

import java.util.ArrayList;
import java.util.List;

/**
 * What happened to one injected fault, for the timeline and the report: when it was injected and
 * healed, when the cluster was back at full strength, whom it hit, what it observed, and what went
 * wrong. Times are nanoTime readings; {@link #NOT_YET} until they happen. Guarded by its monitor.
 */
final class FaultRecord {
  static final long NOT_YET = Long.MIN_VALUE;

  final int number;
  final int step;
  final PlannedFault planned;
  final boolean overlapping;
  private String victim = "";
  private long injectedNanos = NOT_YET;
  private long healedNanos = NOT_YET;
  private long fullStrengthNanos = NOT_YET;
  private final List<String> notes = new ArrayList<>();
  private final List<String> errors = new ArrayList<>();

  FaultRecord(int number, int step, PlannedFault planned, boolean overlapping) {
    this.number = number;
    this.step = step;
    this.planned = planned;
    this.overlapping = overlapping;
  }

  FaultKind kind() {
    return planned.kind();
  }

  synchronized void victim(String victim) {
    this.victim = victim;
  }

  synchronized String victim() {
    return victim;
  }

  synchronized void injected(long nanos) {
    injectedNanos = nanos;
  }

  synchronized void healed(long nanos) {
    healedNanos = nanos;
  }

  synchronized void fullStrength(long nanos) {
    fullStrengthNanos = nanos;
  }

  synchronized long injectedNanos() {
    return injectedNanos;
  }

  synchronized long healedNanos() {
    return healedNanos;
  }

  synchronized long fullStrengthNanos() {
    return fullStrengthNanos;
  }

  synchronized void note(String note) {
    notes.add(note);
  }

  synchronized void error(String error) {
    errors.add(error);
  }

  synchronized List<String> notes() {
    return List.copyOf(notes);
  }

  synchronized List<String> errors() {
    return List.copyOf(errors);
  }

  /** Whether it was injected (an injection that failed leaves it not injected). */
  synchronized boolean ran() {
    return injectedNanos != NOT_YET;
  }
}
