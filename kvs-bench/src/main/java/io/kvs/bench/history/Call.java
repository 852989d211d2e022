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
  private final long invokeNanos;
  private final LongSupplier clock;

  /** Set once; holds every completion field so readers see all of them or none. */
  private volatile Completion completion;

  private record Completion(Outcome outcome, long nanos, Bytes read) {}

  Call(
      long id,
      int client,
      Kind kind,
      Bytes key,
      Bytes value,
      long invokeNanos,
      LongSupplier clock) {
    this.id = id;
    this.client = client;
    this.kind = kind;
    this.key = key;
    this.value = value;
    this.invokeNanos = invokeNanos;
    this.clock = clock;
  }

  /** The operation's id in the history. */
  public long id() {
    return id;
  }

  /** A PUT or DELETE was acknowledged (for a GET use {@link #okRead}). */
  public void ok() {
    if (kind == Kind.GET) {
      throw new IllegalStateException("GET#" + id + " completes with okRead(value)");
    }
    complete(Outcome.OK, null);
  }

  /** A GET returned {@code value}; null means the key was absent. */
  public void okRead(byte[] value) {
    if (kind != Kind.GET) {
      throw new IllegalStateException(kind + "#" + id + " completes with ok()");
    }
    complete(Outcome.OK, value == null ? null : Bytes.of(value));
  }

  /**
   * The request failed with an error that guarantees the write did not and will not take effect.
   * For a GET, any failure: it carries no information.
   */
  public void failedNotApplied() {
    complete(Outcome.FAILED_NOT_APPLIED, null);
  }

  /** Timed out or lost: a write may take effect at any time, or never. */
  public void unknown() {
    complete(Outcome.UNKNOWN, null);
  }

  private void complete(Outcome outcome, Bytes read) {
    // Read the clock first: a later reading only widens the interval, which is always safe.
    Completion done = new Completion(outcome, clock.getAsLong(), read);
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
          id, client, kind, key, value, invokeNanos, Long.MAX_VALUE, Outcome.UNKNOWN);
    }
    Bytes result = kind == Kind.GET ? done.read() : value;
    return new Operation(id, client, kind, key, result, invokeNanos, done.nanos(), done.outcome());
  }
}
