package io.kvs.bench.history;

import java.util.Locale;
import java.util.Objects;

/**
 * One operation of a client against one key, as the client saw it: when it was invoked, when it
 * completed and how. Times are {@link System#nanoTime()} readings of one JVM (or of any one clock
 * shared by every recorded client); the invoke time must be taken no later than the request left
 * and the completion time no earlier than the response arrived, so the real operation lies inside
 * the interval.
 *
 * @param id unique within a {@link History}; explanations name operations as {@code PUT#id}
 * @param client the client (process or thread) that issued it
 * @param kind what it did
 * @param key the key
 * @param value for a PUT or a CAS the value written; for a GET that is {@link Outcome#OK} the value
 *     read, or null when the key was absent; null otherwise
 * @param invokeNanos when it was invoked
 * @param completeNanos when it completed; for an {@link Outcome#UNKNOWN} operation the time the
 *     client gave up (informational only: the checker treats it as +infinity), or {@link
 *     Long#MAX_VALUE} when it never returned
 * @param outcome how it ended
 * @param expected for a CAS the value the key had to hold for it to write, or null for none; null
 *     otherwise
 */
public record Operation(
    long id,
    int client,
    Kind kind,
    Bytes key,
    Bytes value,
    long invokeNanos,
    long completeNanos,
    Outcome outcome,
    Bytes expected) {

  /** What an operation does. */
  public enum Kind {
    /** Writes {@link Operation#value()}; every PUT of a history writes a distinct value. */
    PUT,
    /** Makes the key absent. */
    DELETE,
    /** Reads the key. */
    GET,
    /**
     * Writes {@link Operation#value()} (unique, as a PUT's) if the key holds {@link
     * Operation#expected()} (null: no value), atomically. Only one that wrote, or may have, is a
     * CAS: one that answered "not applied, the key held X" is recorded as the GET of X it was.
     */
    CAS
  }

  /** How an operation ended. */
  public enum Outcome {
    /** Acknowledged: it took effect, at one instant between its invoke and its completion. */
    OK,
    /**
     * A typed error that guarantees the write did not take effect (and never will). A GET that
     * failed in any way carries no information; the checker ignores it.
     */
    FAILED_NOT_APPLIED,
    /**
     * Timed out or the connection was lost: a write may take effect at any instant after its invoke
     * (even after the client gave up), or never.
     */
    UNKNOWN
  }

  /** An operation other than a CAS (no value expected). */
  public Operation(
      long id,
      int client,
      Kind kind,
      Bytes key,
      Bytes value,
      long invokeNanos,
      long completeNanos,
      Outcome outcome) {
    this(id, client, kind, key, value, invokeNanos, completeNanos, outcome, null);
  }

  /** Validates the fields against the contracts above. */
  public Operation {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(outcome, "outcome");
    if ((kind == Kind.PUT || kind == Kind.CAS) && value == null) {
      throw new IllegalArgumentException(kind + "#" + id + " has no value");
    }
    if (kind != Kind.CAS && expected != null) {
      throw new IllegalArgumentException(kind + "#" + id + " expects a value: only a CAS does");
    }
    if (kind == Kind.DELETE && value != null) {
      throw new IllegalArgumentException("DELETE#" + id + " has a value");
    }
    if (kind == Kind.GET && outcome != Outcome.OK && value != null) {
      throw new IllegalArgumentException("GET#" + id + " did not succeed but has a value");
    }
    if (outcome != Outcome.UNKNOWN && completeNanos < invokeNanos) {
      throw new IllegalArgumentException(
          kind
              + "#"
              + id
              + " completed ("
              + completeNanos
              + ") before invoked ("
              + invokeNanos
              + ")");
    }
  }

  /** True for PUT, DELETE and CAS. */
  public boolean isWrite() {
    return kind != Kind.GET;
  }

  /** "PUT#12", "GET#7". */
  public String name() {
    return kind + "#" + id;
  }

  /**
   * One line for explanations: name, client, key, value, interval and outcome, times in
   * milliseconds since {@code originNanos}.
   */
  public String describe(long originNanos) {
    StringBuilder out = new StringBuilder(96).append(name()).append(" client ").append(client);
    out.append(" key ").append(key);
    switch (kind) {
      case PUT -> out.append(" value ").append(value);
      case CAS ->
          out.append(" from ")
              .append(expected == null ? "absent" : expected.toString())
              .append(" to ")
              .append(value);
      case GET -> {
        if (outcome == Outcome.OK) {
          out.append(" returned ").append(value == null ? "absent" : value.toString());
        }
      }
      case DELETE -> {}
    }
    out.append(" [").append(millis(invokeNanos, originNanos)).append(", ");
    out.append(outcome == Outcome.UNKNOWN ? "inf)" : millis(completeNanos, originNanos) + "]");
    return out.append(' ').append(outcome).toString();
  }

  /** Milliseconds since the origin, to the microsecond: "12.345 ms". */
  static String millis(long nanos, long originNanos) {
    return String.format(Locale.ROOT, "%.3f ms", (nanos - originNanos) / 1e6);
  }

  @Override
  public String toString() {
    return describe(0);
  }
}
