package io.kvs.bench.history;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Operation.Outcome;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Randomized: simulated linearizable histories must pass; the same histories with one read made
 * stale in a way known to be wrong must fail on that key; and on small random histories the checker
 * must agree with the brute-force definition, both ways.
 */
class RandomHistoriesTest {
  private final LinearizabilityChecker checker = new LinearizabilityChecker();

  @Test
  void simulatedHistoriesAreLinearizable() {
    RegisterSimulation simulation = new RegisterSimulation();
    simulation.clients = 6;
    simulation.keys = 4;
    simulation.operations = 400;
    simulation.casShare = 0.15;
    for (long seed = 0; seed < 300; seed++) {
      History history = simulation.generate(seed);
      for (LinearizabilityChecker mode : List.of(checker, checker.searchOnly())) {
        Verdict verdict = mode.check(history);
        assertThat(verdict.result())
            .as("seed %d: %s", seed, verdict.describe())
            .isEqualTo(Verdict.Result.LINEARIZABLE);
      }
    }
  }

  @Test
  void aReadMadeStaleIsCaught() {
    RegisterSimulation simulation = new RegisterSimulation();
    simulation.clients = 6;
    simulation.keys = 4;
    simulation.operations = 400;
    simulation.casShare = 0.15;
    int mutated = 0;
    for (long seed = 0; seed < 300; seed++) {
      History history = simulation.generate(seed);
      Operation read = staleCandidate(history, new SplittableRandom(seed));
      if (read == null) {
        continue;
      }
      mutated++;
      for (LinearizabilityChecker mode : List.of(checker, checker.searchOnly())) {
        Verdict verdict = mode.check(replace(history, read));
        assertThat(verdict.result()).as("seed %d", seed).isEqualTo(Verdict.Result.NOT_LINEARIZABLE);
        assertThat(verdict.findings())
            .as("seed %d: %s", seed, verdict.describe())
            .extracting(Verdict.KeyFinding::key)
            .containsExactly(read.key());
      }
    }
    assertThat(mutated).isGreaterThan(250);
  }

  /**
   * A successful read changed to return the value of an acknowledged PUT P on its key such that an
   * acknowledged write W was invoked after P completed and completed before the read was invoked: W
   * surely replaced P's value first, so the changed history is surely wrong.
   */
  private static Operation staleCandidate(History history, SplittableRandom random) {
    List<Operation> ops = history.operations();
    List<Operation> candidates = new ArrayList<>();
    for (Operation read : ops) {
      if (read.kind() != Kind.GET || read.outcome() != Outcome.OK) {
        continue;
      }
      for (Operation p : ops) {
        if (p.kind() != Kind.PUT
            || p.outcome() != Outcome.OK
            || !p.key().equals(read.key())
            || p.value().equals(read.value())) {
          continue;
        }
        boolean overwritten =
            ops.stream()
                .anyMatch(
                    w ->
                        w.isWrite()
                            && w.outcome() == Outcome.OK
                            && w.key().equals(read.key())
                            && w.invokeNanos() > p.completeNanos()
                            && w.completeNanos() < read.invokeNanos());
        if (overwritten) {
          candidates.add(
              new Operation(
                  read.id(),
                  read.client(),
                  Kind.GET,
                  read.key(),
                  p.value(),
                  read.invokeNanos(),
                  read.completeNanos(),
                  Outcome.OK));
        }
      }
    }
    return candidates.isEmpty() ? null : candidates.get(random.nextInt(candidates.size()));
  }

  private static History replace(History history, Operation changed) {
    List<Operation> ops = new ArrayList<>(history.operations());
    ops.replaceAll(op -> op.id() == changed.id() ? changed : op);
    return new History(ops);
  }

  @Test
  void smallRandomHistoriesAgreeWithTheBruteForceDefinition() {
    SplittableRandom random = new SplittableRandom(42);
    int good = 0;
    int bad = 0;
    for (int i = 0; i < 20_000; i++) {
      Map<Bytes, Bytes> initial = new HashMap<>();
      if (random.nextInt(4) == 0) {
        initial.put(Bytes.utf8("k0"), Bytes.utf8("init"));
      }
      History history = i % 2 == 0 ? arbitrary(random) : simulatedThenMutated(random);
      boolean expected = BruteForce.linearizable(history, initial);
      LinearizabilityChecker withInitial = checker.withInitialValues(initial);
      for (LinearizabilityChecker mode : List.of(withInitial, withInitial.searchOnly())) {
        Verdict verdict = mode.check(history);
        assertThat(verdict.isLinearizable())
            .as(
                "case %d, brute force says %s: %s\n%s",
                i, expected, verdict.describe(), history.operations())
            .isEqualTo(expected);
        assertThat(verdict.result()).isNotEqualTo(Verdict.Result.UNKNOWN);
      }
      if (expected) {
        good++;
      } else {
        bad++;
      }
    }
    assertThat(good).isGreaterThan(2_000);
    assertThat(bad).isGreaterThan(2_000);
  }

  /** Up to 8 operations on 1 or 2 keys, with arbitrary times, outcomes and read results. */
  private static History arbitrary(SplittableRandom random) {
    int n = 1 + random.nextInt(8);
    int keys = 1 + random.nextInt(2);
    List<String> values = new ArrayList<>(List.of("init", "ghost"));
    Histories h = new Histories();
    List<Runnable> reads = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String key = "k" + random.nextInt(keys);
      long invoke = random.nextInt(12);
      long complete = invoke + random.nextInt(6);
      int client = random.nextInt(3);
      int kind = random.nextInt(10);
      double fate = random.nextDouble();
      Outcome outcome =
          fate < 0.15 ? Outcome.UNKNOWN : fate < 0.25 ? Outcome.FAILED_NOT_APPLIED : Outcome.OK;
      if (kind < 4) {
        String value = "v" + i;
        values.add(value);
        h.add(client, Kind.PUT, key, value, invoke, complete, outcome);
      } else if (kind < 6) {
        h.add(client, Kind.DELETE, key, null, invoke, complete, outcome);
      } else if (kind < 7) {
        String value = "v" + i;
        values.add(value);
        // Its expected value is chosen once every value is known, as a read's result.
        reads.add(
            () -> {
              String expected =
                  random.nextInt(4) == 0 ? null : values.get(random.nextInt(values.size()));
              h.cas(client, key, expected, value, invoke, complete, outcome);
            });
      } else {
        // Chosen once every value is known, so reads may return values written later.
        reads.add(
            () -> {
              String value =
                  random.nextInt(4) == 0 ? null : values.get(random.nextInt(values.size()));
              if (fate < 0.05) {
                h.add(client, Kind.GET, key, null, invoke, complete, Outcome.UNKNOWN);
              } else {
                h.add(client, Kind.GET, key, value, invoke, complete, Outcome.OK);
              }
            });
      }
    }
    reads.forEach(Runnable::run);
    return h.build();
  }

  /** A small simulated history, with one read's result replaced at random half the time. */
  private static History simulatedThenMutated(SplittableRandom random) {
    RegisterSimulation simulation = new RegisterSimulation();
    simulation.clients = 3;
    simulation.keys = 1 + random.nextInt(2);
    simulation.operations = 4 + random.nextInt(6);
    simulation.maxDuration = 6;
    simulation.maxGap = 2;
    simulation.unknownRate = 0.2;
    simulation.failedRate = 0.1;
    simulation.casShare = 0.15;
    History history = simulation.generate(random.nextLong());
    List<Operation> ops = new ArrayList<>(history.operations());
    List<Bytes> values = new ArrayList<>();
    ops.stream().filter(op -> op.kind() == Kind.PUT).forEach(op -> values.add(op.value()));
    values.add(null);
    for (int i = 0; i < ops.size(); i++) {
      Operation op = ops.get(i);
      if (op.kind() == Kind.GET && op.outcome() == Outcome.OK && random.nextBoolean()) {
        Bytes value = values.get(random.nextInt(values.size()));
        ops.set(
            i,
            new Operation(
                op.id(),
                op.client(),
                op.kind(),
                op.key(),
                value,
                op.invokeNanos(),
                op.completeNanos(),
                op.outcome()));
        break;
      }
    }
    return new History(ops);
  }
}
