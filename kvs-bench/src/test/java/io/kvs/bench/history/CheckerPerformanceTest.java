package io.kvs.bench.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Operation.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Sanity, not a benchmark: histories of the size the fault tests produce are checked in seconds.
 * The bounds are generous so a slow machine does not fail; the times are printed.
 */
class CheckerPerformanceTest {
  private static final Duration GENEROUS = Duration.ofSeconds(60);

  private static Verdict checkTimed(String name, RegisterSimulation simulation, long seed) {
    History history = simulation.generate(seed);
    Verdict verdict = new LinearizabilityChecker().check(history);
    System.out.printf("checker performance, %s: %s%n", name, verdict.summary());
    return verdict;
  }

  @Test
  void twentyThousandOperationsOnTwentyKeysFromSixteenClients() {
    RegisterSimulation simulation = new RegisterSimulation();
    simulation.clients = 16;
    simulation.keys = 20;
    simulation.operations = 20_000;
    simulation.maxDuration = 1_000;
    simulation.maxGap = 10;
    Verdict verdict =
        assertTimeoutPreemptively(GENEROUS, () -> checkTimed("20k ops, 20 keys", simulation, 1));
    assertThat(verdict.isLinearizable()).as(verdict.describe()).isTrue();
    assertThat(verdict.operations()).isEqualTo(20_000);
    assertThat(verdict.keys()).isEqualTo(20);
  }

  @Test
  void thousandsOfOperationsOnOneKeyWithSixteenConcurrentClients() {
    RegisterSimulation simulation = new RegisterSimulation();
    simulation.clients = 16;
    simulation.keys = 1;
    simulation.operations = 8_000;
    simulation.maxDuration = 1_000;
    simulation.maxGap = 10;
    Verdict verdict =
        assertTimeoutPreemptively(GENEROUS, () -> checkTimed("8k ops, 1 key", simulation, 2));
    assertThat(verdict.isLinearizable()).as(verdict.describe()).isTrue();
  }

  @Test
  void aStaleReadDeepInsideAConcurrentKeyIsFoundInTime() {
    RegisterSimulation simulation = new RegisterSimulation();
    simulation.clients = 16;
    simulation.keys = 1;
    simulation.operations = 4_000;
    simulation.maxDuration = 1_000;
    simulation.maxGap = 10;
    History good = simulation.generate(3);
    // Append a read far after everything that returns the very first acknowledged PUT's value.
    Operation first =
        good.operations().stream()
            .filter(op -> op.kind() == Kind.PUT && op.outcome() == Outcome.OK)
            .findFirst()
            .orElseThrow();
    long end = good.operations().stream().mapToLong(Operation::completeNanos).max().orElseThrow();
    List<Operation> ops = new ArrayList<>(good.operations());
    ops.add(
        new Operation(
            1_000_000, 99, Kind.GET, first.key(), first.value(), end + 10, end + 20, Outcome.OK));
    History bad = new History(ops);
    for (LinearizabilityChecker checker :
        List.of(new LinearizabilityChecker(), new LinearizabilityChecker().searchOnly())) {
      Verdict verdict = assertTimeoutPreemptively(GENEROUS, () -> checker.check(bad));
      System.out.printf("checker performance, 4k ops + stale read: %s%n", verdict.summary());
      assertThat(verdict.result()).isNotEqualTo(Verdict.Result.LINEARIZABLE);
    }
  }
}
