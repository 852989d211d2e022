package io.kvs.bench.history;

import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Operation.Outcome;
import java.util.ArrayList;
import java.util.List;

/** Builds histories by hand for the tests: string keys and values, small integer times. */
final class Histories {
  private final List<Operation> ops = new ArrayList<>();
  private long lastId;

  static Bytes b(String text) {
    return Bytes.utf8(text);
  }

  /** The id the next operation gets. */
  long nextId() {
    return lastId + 1;
  }

  Histories put(int client, String key, String value, long invoke, long complete) {
    return add(client, Kind.PUT, key, value, invoke, complete, Outcome.OK);
  }

  Histories putUnknown(int client, String key, String value, long invoke) {
    return add(client, Kind.PUT, key, value, invoke, invoke + 1, Outcome.UNKNOWN);
  }

  Histories putFailed(int client, String key, String value, long invoke, long complete) {
    return add(client, Kind.PUT, key, value, invoke, complete, Outcome.FAILED_NOT_APPLIED);
  }

  Histories delete(int client, String key, long invoke, long complete) {
    return add(client, Kind.DELETE, key, null, invoke, complete, Outcome.OK);
  }

  Histories deleteUnknown(int client, String key, long invoke) {
    return add(client, Kind.DELETE, key, null, invoke, invoke + 1, Outcome.UNKNOWN);
  }

  /** A successful GET; {@code value} null means it returned absent. */
  Histories get(int client, String key, String value, long invoke, long complete) {
    return add(client, Kind.GET, key, value, invoke, complete, Outcome.OK);
  }

  Histories getFailed(int client, String key, long invoke) {
    return add(client, Kind.GET, key, null, invoke, invoke + 1, Outcome.UNKNOWN);
  }

  /** An acknowledged CAS from {@code expected} (null: absent) to {@code value}. */
  Histories cas(int client, String key, String expected, String value, long invoke, long complete) {
    return cas(client, key, expected, value, invoke, complete, Outcome.OK);
  }

  Histories casUnknown(int client, String key, String expected, String value, long invoke) {
    return cas(client, key, expected, value, invoke, invoke + 1, Outcome.UNKNOWN);
  }

  Histories cas(
      int client,
      String key,
      String expected,
      String value,
      long invoke,
      long complete,
      Outcome outcome) {
    ops.add(
        new Operation(
            ++lastId,
            client,
            Kind.CAS,
            b(key),
            b(value),
            invoke,
            complete,
            outcome,
            expected == null ? null : b(expected)));
    return this;
  }

  Histories add(
      int client,
      Kind kind,
      String key,
      String value,
      long invoke,
      long complete,
      Outcome outcome) {
    ops.add(
        new Operation(
            ++lastId,
            client,
            kind,
            b(key),
            value == null ? null : b(value),
            invoke,
            complete,
            outcome));
    return this;
  }

  History build() {
    return new History(ops);
  }
}
