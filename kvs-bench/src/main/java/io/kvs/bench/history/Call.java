package io.kvs.bench.history;

import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Operation.Outcome;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.LongSupplier;

/**
 * An operation invoked through {@link HistoryRecorder#invoke}: complete it exactly once, right
 * after the answer (or failure) arrives, with {@link #ok()}, {@link #okRead}, {@link
 * #failedNotApplied()} or {@link #unknown()}. Thread-safe; a second completion throws {@link
 * IllegalStateException}. A call never completed counts as {@link Outcome#UNKNOWN}.
 */
public final class Call {
  private static final VarHandle COMPLETION;

  static {
    try {
      COMPLETION = MethodHandles.lookup().findVarHandle(Call.class, "completion", Completion.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final long id;
  private final int client;
  private final Kind kind;
  private final Bytes key;
  private final Bytes value;
  private final Bytes expected;
  private final long invokeNanos;
  private final LongSupplier clock;

  /** Set once; holds every completion field so readers see all of them or none. */
  private volatile Completion completion;

  /** {@code notApplied}: a CAS answered that the key held {@code read} instead (a read of it). */
  private record Completion(Outcome outcome, long nanos, Bytes read, boolean notApplied) {}

  Call(
      long id,
      int client,
      Kind kind,
      Bytes key,
      Bytes value,
      Bytes expected,
      long invokeNanos,
      LongSupplier clock) {
    this.id = id;
    this.client = client;
    this.kind = kind;
    this.key = key;
    this.value = value;
    this.expected = expected;
    this.invokeNanos = invokeNanos;
    this.clock = clock;
  }

  /** The operation's id in the history. */
  public long id() {
    return id;
  }

  /** A PUT, DELETE or CAS was acknowledged, the CAS applied (for a GET use {@link #okRead}). */
  public void ok() {
    if (kind == Kind.GET) {
      throw new IllegalStateException("GET#" + id + " completes with okRead(value)");
    }
    complete(Outcome.OK, null, false);
  }

  /**
   * A CAS answered that it did not write: the key held {@code current} (null: no value). It is
   * recorded as the read of {@code current} it was.
   */
  public void notApplied(byte[] current) {
    if (kind != Kind.CAS) {
      throw new IllegalStateException(kind + "#" + id + " is no CAS");
    }
    complete(Outcome.OK, current == null ? null : Bytes.of(current), true);
  }

  /** A GET returned {@code value}; null means the key was absent. */
  public void okRead(byte[] value) {
    if (kind != Kind.GET) {
      throw new IllegalStateException(kind + "#" + id + " completes with ok()");
    }
    complete(Outcome.OK, value == null ? null : Bytes.of(value), false);
  }

  /**
   * The request failed with an error that guarantees the write did not and will not take effect.
   * For a GET, any failure: it carries no information.
   */
  public void failedNotApplied() {
    complete(Outcome.FAILED_NOT_APPLIED, null, false);
  }

  /** Timed out or lost: a write may take effect at any time, or never. */
  public void unknown() {
    complete(Outcome.UNKNOWN, null, false);
  }

  private void complete(Outcome outcome, Bytes read, boolean notApplied) {
    // Read the clock first: a later reading only widens the interval, which is always safe.
    Completion done = new Completion(outcome, clock.getAsLong(), read, notApplied);
    if (!COMPLETION.compareAndSet(this, null, done)) {
      throw new IllegalStateException(
          kind + "#" + id + " already completed as " + completion.outcome());
    }
  }

  /** The operation as recorded so far: UNKNOWN, never returned, if not completed yet. */
  Operation operation() {
    Completion done = completion;
    if (done == null) {
      return new Operation(
          id, client, kind, key, value, invokeNanos, Long.MAX_VALUE, Outcome.UNKNOWN, expected);
    }
    if (done.notApplied()) {
      return new Operation(
          id, client, Kind.GET, key, done.read(), invokeNanos, done.nanos(), Outcome.OK);
    }
    Bytes result = kind == Kind.GET ? done.read() : value;
    return new Operation(
        id,
        client,
        kind,
        key,
        result,
        invokeNanos,
        done.nanos(),
        done.outcome(),
        kind == Kind.CAS ? expected : null);
  }
}
