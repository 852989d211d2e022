package io.kvs.bench.history;

import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Operation.Outcome;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Generates histories that are linearizable by construction: clients issue operations one after
 * another; each operation that takes effect does so at a random instant inside its interval (an
 * UNKNOWN write that takes effect: at a random instant after its invoke, possibly after the client
 * gave up), and an atomic register per key, applied in the order of those instants, gives every GET
 * its result and decides every CAS (from the value last written to its key when it was generated):
 * one that finds another value is recorded as the GET of it that its answer was, as the client
 * records it.
 */
final class RegisterSimulation {
  int clients = 4;
  int keys = 3;
  int operations = 200;
  int maxDuration = 20;
  int maxGap = 5;
  double putShare = 0.45;
  double deleteShare = 0.05;
  double casShare = 0.0;
  double unknownRate = 0.05;
  double failedRate = 0.03;
  double failedReadRate = 0.02;

  /** An operation being generated, with its linearization point (-1: never takes effect). */
  private static final class Draft {
    long id;
    int client;
    Kind kind;
    String key;
    String value;
    String expected;
    long invoke;
    long complete;
    Outcome outcome;
    long point;
  }

  History generate(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    long[] clientTime = new long[clients];
    List<Draft> drafts = new ArrayList<>();
    Map<String, String> lastWritten = new HashMap<>();
    for (int i = 0; i < operations; i++) {
      Draft d = new Draft();
      d.id = i + 1;
      d.client = random.nextInt(clients);
      d.key = "k" + random.nextInt(keys);
      double kind = random.nextDouble();
      d.kind =
          kind < putShare
              ? Kind.PUT
              : kind < putShare + deleteShare
                  ? Kind.DELETE
                  : kind < putShare + deleteShare + casShare ? Kind.CAS : Kind.GET;
      d.value = d.kind == Kind.PUT || d.kind == Kind.CAS ? "c" + d.client + "-" + d.id : null;
      if (d.kind == Kind.CAS) {
        d.expected = lastWritten.get(d.key);
      }
      if (d.kind == Kind.PUT || d.kind == Kind.CAS) {
        lastWritten.put(d.key, d.value);
      } else if (d.kind == Kind.DELETE) {
        lastWritten.remove(d.key);
      }
      d.invoke = clientTime[d.client] + random.nextInt(maxGap + 1);
      d.complete = d.invoke + random.nextInt(maxDuration + 1);
      clientTime[d.client] = d.complete;
      d.point = d.invoke + random.nextLong(d.complete - d.invoke + 1);
      d.outcome = Outcome.OK;
      double fate = random.nextDouble();
      if (d.kind != Kind.GET && fate < unknownRate) {
        d.outcome = Outcome.UNKNOWN;
        // Half never take effect; the others at any time after invoke, even after giving up.
        d.point = random.nextBoolean() ? -1 : d.invoke + random.nextLong(3L * maxDuration + 1);
      } else if (d.kind != Kind.GET && fate < unknownRate + failedRate) {
        d.outcome = Outcome.FAILED_NOT_APPLIED;
        d.point = -1;
      } else if (d.kind == Kind.GET && fate < failedReadRate) {
        d.outcome = Outcome.UNKNOWN;
        d.point = -1;
      }
      drafts.add(d);
    }
    List<Draft> effective = new ArrayList<>(drafts.stream().filter(d -> d.point >= 0).toList());
    effective.sort(Comparator.comparingLong((Draft d) -> d.point).thenComparingLong(d -> d.id));
    Map<String, String> register = new HashMap<>();
    for (Draft d : effective) {
      switch (d.kind) {
        case PUT -> register.put(d.key, d.value);
        case DELETE -> register.remove(d.key);
        case GET -> d.value = register.get(d.key);
        case CAS -> {
          String current = register.get(d.key);
          if (java.util.Objects.equals(current, d.expected)) {
            register.put(d.key, d.value);
          } else if (d.outcome == Outcome.OK) {
            // Not applied: its answer told the value it found.
            d.kind = Kind.GET;
            d.value = current;
            d.expected = null;
          }
        }
      }
    }
    List<Operation> ops = new ArrayList<>();
    for (Draft d : drafts) {
      ops.add(
          new Operation(
              d.id,
              d.client,
              d.kind,
              Bytes.utf8(d.key),
              d.value == null ? null : Bytes.utf8(d.value),
              d.invoke,
              d.complete,
              d.outcome,
              d.expected == null ? null : Bytes.utf8(d.expected)));
    }
    return new History(ops);
  }
}
