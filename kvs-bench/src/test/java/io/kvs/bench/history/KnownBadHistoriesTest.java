package io.kvs.bench.history;

import static io.kvs.bench.history.Histories.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.bench.history.Verdict.KeyFinding;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Histories known to be wrong: the checker must reject each, name the right key and the operations
 * at fault. Each runs twice: with the direct rules (whose proofs make the explanation) and through
 * the search alone, so both halves of the checker are shown to catch it.
 */
class KnownBadHistoriesTest {
  static Stream<LinearizabilityChecker> checkers() {
    LinearizabilityChecker checker = new LinearizabilityChecker();
    return Stream.of(checker, checker.searchOnly());
  }

  /** Checks that the verdict rejects exactly {@code key} and its explanation names the ops. */
  private static Verdict assertRejected(
      LinearizabilityChecker checker, History history, String key, long... opIds) {
    assertThat(BruteForce.linearizable(history, Map.of())).as("brute force").isFalse();
    Verdict verdict = checker.check(history);
    assertThat(verdict.result()).as(verdict.describe()).isEqualTo(Verdict.Result.NOT_LINEARIZABLE);
    assertThat(verdict.isLinearizable()).isFalse();
    assertThat(verdict.findings()).hasSize(1);
    KeyFinding finding = verdict.findings().get(0);
    assertThat(finding.key()).isEqualTo(b(key));
    assertThat(finding.kind()).isEqualTo(KeyFinding.Kind.VIOLATION);
    assertThat(finding.explanation()).startsWith("key \"" + key + "\": ");
    for (long id : opIds) {
      assertThat(finding.involved()).as(verdict.describe()).anyMatch(op -> op.id() == id);
    }
    return verdict;
  }

  @ParameterizedTest
  @MethodSource("checkers")
  void twoCompareAndSetsFromOneValueBothApplied(LinearizabilityChecker checker) {
    // Only one can find v1: the other must have found the first's value.
    History history =
        new Histories()
            .put(1, "k", "v1", 0, 1)
            .cas(1, "k", "v1", "a", 2, 3)
            .cas(2, "k", "v1", "b", 4, 5)
            .build();
    assertRejected(checker, history, "k", 3);
  }

  @ParameterizedTest
  @MethodSource("checkers")
  void aCompareAndSetFromAValueTheKeyNeverHeld(LinearizabilityChecker checker) {
    History history =
        new Histories()
            .put(1, "k", "v1", 0, 1)
            .cas(2, "k", "v9", "a", 2, 3)
            .get(1, "k", "a", 4, 5)
            .build();
    assertRejected(checker, history, "k", 2);
  }

  @ParameterizedTest
  @MethodSource("checkers")
  void aPutIfAbsentAppliedOverAValue(LinearizabilityChecker checker) {
    History history = new Histories().put(1, "k", "v1", 0, 1).cas(2, "k", null, "a", 2, 3).build();
    assertRejected(checker, history, "k", 2);
  }

  @ParameterizedTest
  @MethodSource("checkers")
  void aCompareAndSetWhoseValueWasLost(LinearizabilityChecker checker) {
    // Acknowledged, then a later read finds the value it replaced.
    History history =
        new Histories()
            .put(1, "k", "v1", 0, 1)
            .cas(1, "k", "v1", "a", 2, 3)
            .get(2, "k", "v1", 4, 5)
            .build();
    assertRejected(checker, history, "k", 3);
  }

  @ParameterizedTest
  @MethodSource("checkers")
  void staleRead(LinearizabilityChecker checker) {
    History history =
        new Histories()
            .put(1, "k", "v1", 0, 1)
            .put(1, "k", "v2", 2, 3)
            .get(2, "k", "v1", 4, 5)
            .build();
    Verdict verdict = assertRejected(checker, history, "k", 3);
    if (verdict.findings().get(0).statesExplored() == 0) {
      assertThat(verdict.findings().get(0).explanation())
          .contains("stale read: GET#3 returned the value of PUT#1, but PUT#2");
    }
  }

  @ParameterizedTest
  @MethodSource("checkers")
  void lostWriteFinalReadAbsentOrOld(LinearizabilityChecker checker) {
    for (String finalValue : new String[] {null, "v1"}) {
      History history =
          new Histories()
              .put(1, "k", "v1", 0, 1)
              .put(2, "k", "v2", 2, 3)
              .get(3, "k", "v2", 4, 5)
              .get(3, "k", finalValue, 10, 11)
              .build();
      Verdict verdict = assertRejected(checker, history, "k", 4);
      assertThat(verdict.lostWrites()).hasSize(1);
      Verdict.LostWrite lost = verdict.lostWrites().get(0);
      assertThat(lost.key()).isEqualTo(b("k"));
      assertThat(lost.write().id()).isEqualTo(2);
      assertThat(lost.finalRead().id()).isEqualTo(4);
      assertThat(lost.explanation()).contains("acknowledged PUT#2").contains("GET#4");
    }
  }

  @ParameterizedTest
  @MethodSource("checkers")
  void readOfAValueNeverWritten(LinearizabilityChecker checker) {
    History history = new Histories().put(1, "k", "v1", 0, 1).get(2, "k", "ghost", 4, 5).build();
    Verdict verdict = assertRejected(checker, history, "k", 2);
    assertThat(verdict.lostWrites()).isEmpty();
  }

  @ParameterizedTest
  @MethodSource("checkers")
  void readOfAFailedPutsValue(LinearizabilityChecker checker) {
    History history =
        new Histories()
            .put(1, "k", "v1", 0, 1)
            .putFailed(1, "k", "v2", 2, 3)
            .get(2, "k", "v2", 4, 5)
            .build();
    Verdict verdict = assertRejected(checker, history, "k", 3);
    if (verdict.findings().get(0).statesExplored() == 0) {
      assertThat(verdict.findings().get(0).explanation()).contains("PUT#2, which failed");
    }
  }

  @ParameterizedTest
  @MethodSource("checkers")
  void readOfAValueWrittenToAnotherKey(LinearizabilityChecker checker) {
    History history = new Histories().put(1, "j", "v1", 0, 1).get(2, "k", "v1", 4, 5).build();
    assertRejected(checker, history, "k", 2);
  }

  @ParameterizedTest
  @MethodSource("checkers")
  void readReturnsAValueBeforeItsPutWasInvoked(LinearizabilityChecker checker) {
    History history = new Histories().get(2, "k", "v1", 0, 1).put(1, "k", "v1", 5, 6).build();
    assertRejected(checker, history, "k", 1);
    // The same with the PUT's outcome unknown: it cannot have taken effect before its invoke.
    History unknown = new Histories().get(2, "k", "v1", 0, 1).putUnknown(1, "k", "v1", 5).build();
    assertRejected(checker, unknown, "k", 1);
  }

  @ParameterizedTest
  @MethodSource("checkers")
  void nonMonotonicReads(LinearizabilityChecker checker) {
    History history =
        new Histories()
            .put(1, "k", "v1", 0, 10)
            .put(2, "k", "v2", 5, 15)
            .get(3, "k", "v2", 20, 21)
            .get(3, "k", "v1", 30, 31)
            .build();
    Verdict verdict = assertRejected(checker, history, "k", 4);
    if (verdict.findings().get(0).statesExplored() == 0) {
      assertThat(verdict.findings().get(0).explanation()).contains("non-monotonic reads");
    }
  }

  @ParameterizedTest
  @MethodSource("checkers")
  void staleAbsentAfterAnAcknowledgedPut(LinearizabilityChecker checker) {
    History history =
        new Histories()
            .delete(1, "k", 0, 1)
            .put(1, "k", "v1", 2, 3)
            .get(2, "k", null, 4, 5)
            .put(1, "k", "v2", 6, 7)
            .build();
    assertRejected(checker, history, "k", 3);
  }

  @ParameterizedTest
  @MethodSource("checkers")
  void aViolationOnlyTheSearchCanProve(LinearizabilityChecker checker) {
    // PUT#2 was invoked after PUT#1 completed and GET#3 saw it; GET#4, strictly after GET#3,
    // cannot see PUT#1 again. No direct rule applies (PUT#2 is UNKNOWN, GET#3 began early).
    History history =
        new Histories()
            .put(1, "k", "v1", 0, 2)
            .putUnknown(2, "k", "v2", 3)
            .get(3, "k", "v2", 1, 12)
            .get(3, "k", "v1", 13, 14)
            .build();
    Verdict verdict = assertRejected(checker, history, "k", 4);
    assertThat(verdict.findings().get(0).statesExplored()).isPositive();
    assertThat(verdict.findings().get(0).explanation()).contains("GET#4");
  }

  @ParameterizedTest
  @MethodSource("checkers")
  void oneBadKeyAmongManyGoodOnes(LinearizabilityChecker checker) {
    Histories histories = new Histories();
    for (int k = 0; k < 10; k++) {
      long t = 100L * k;
      histories
          .put(1, "k" + k, "a" + k, t, t + 10)
          .get(2, "k" + k, "a" + k, t + 5, t + 20)
          .put(3, "k" + k, "b" + k, t + 30, t + 40)
          .get(2, "k" + k, k == 7 ? "a7" : "b" + k, t + 50, t + 60);
    }
    History history = histories.build();
    Verdict verdict = assertRejected(checker, history, "k7", 7 * 4 + 4);
    assertThat(verdict.keys()).isEqualTo(10);
    assertThat(verdict.lostWrites()).extracting(Verdict.LostWrite::key).containsExactly(b("k7"));
  }

  @Test
  void aSearchOutOfBudgetIsUnknownNeverLinearizable() {
    History history = new RegisterSimulation().generate(7);
    LinearizabilityChecker tight = new LinearizabilityChecker().withMaxStatesPerKey(3);
    Verdict verdict = tight.check(history);
    assertThat(verdict.result()).isEqualTo(Verdict.Result.UNKNOWN);
    assertThat(verdict.isLinearizable()).isFalse();
    assertThat(verdict.findings())
        .isNotEmpty()
        .allSatisfy(
            f -> {
              assertThat(f.kind()).isEqualTo(KeyFinding.Kind.BUDGET_EXHAUSTED);
              assertThat(f.explanation()).contains("unknown (search budget exhausted)");
            });
    assertThat(new LinearizabilityChecker().check(history).isLinearizable()).isTrue();
  }

  @Test
  void duplicateValuesAreRejectedAsAHarnessBug() {
    History history = new Histories().put(1, "k", "v", 0, 1).put(2, "j", "v", 2, 3).build();
    assertThatThrownBy(() -> new LinearizabilityChecker().check(history))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("PUT#1 and PUT#2 both write \"v\"");
  }
}
