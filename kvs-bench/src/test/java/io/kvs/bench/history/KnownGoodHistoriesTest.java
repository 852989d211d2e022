package io.kvs.bench.history;

import static io.kvs.bench.history.Histories.b;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Histories that are linearizable: the checker must accept each, with and without its direct rules,
 * and the brute-force definition must agree (so the histories themselves are right).
 */
class KnownGoodHistoriesTest {
  private static void assertLinearizable(History history) {
    assertLinearizable(history, Map.of());
  }

  private static void assertLinearizable(History history, Map<Bytes, Bytes> initial) {
    assertThat(BruteForce.linearizable(history, initial)).as("brute force").isTrue();
    LinearizabilityChecker checker = new LinearizabilityChecker().withInitialValues(initial);
    for (LinearizabilityChecker mode :
        new LinearizabilityChecker[] {checker, checker.searchOnly()}) {
      Verdict verdict = mode.check(history);
      assertThat(verdict.result()).as(verdict.describe()).isEqualTo(Verdict.Result.LINEARIZABLE);
      assertThat(verdict.isLinearizable()).isTrue();
      assertThat(verdict.findings()).isEmpty();
      assertThat(verdict.lostWrites()).isEmpty();
      assertThat(verdict.operations()).isEqualTo(history.size());
      assertThat(verdict.keys()).isEqualTo(history.keys().size());
    }
  }

  @Test
  void compareAndSetsInAChainAndConcurrently() {
    // A chain, then two concurrent CASes from one value: one applied, the other not (recorded as
    // the read of the winner's value it answered).
    assertLinearizable(
        new Histories()
            .cas(1, "k", null, "a", 0, 1)
            .cas(2, "k", "a", "b", 2, 3)
            .cas(1, "k", "b", "c", 4, 10)
            .get(2, "k", "c", 5, 11)
            .get(1, "k", "c", 12, 13)
            .build());
    // Concurrent: the one acknowledged second may be ordered first.
    assertLinearizable(
        new Histories()
            .put(1, "k", "v", 0, 1)
            .cas(1, "k", "v", "x", 2, 10)
            .cas(2, "k", "x", "y", 3, 8)
            .get(3, "k", "y", 11, 12)
            .build());
  }

  @Test
  void anUnknownCompareAndSetMayHaveAppliedOrNot() {
    // Its value was read later: it applied, from the value it expected.
    assertLinearizable(
        new Histories()
            .put(1, "k", "v", 0, 1)
            .casUnknown(2, "k", "v", "x", 2)
            .get(1, "k", "x", 5, 6)
            .cas(1, "k", "x", "y", 7, 8)
            .build());
    // A chain of uncertain writes: only the last one's value was read, so the CAS applied, from
    // the value of the UNKNOWN PUT before it, which applied too (read through the CAS).
    assertLinearizable(
        new Histories()
            .put(1, "k", "v", 0, 1)
            .putUnknown(2, "k", "w", 2)
            .casUnknown(3, "k", "w", "x", 4)
            .get(1, "k", "x", 8, 9)
            .build());
    // Never read: it may not have applied, and a CAS from the old value did.
    assertLinearizable(
        new Histories()
            .put(1, "k", "v", 0, 1)
            .casUnknown(2, "k", "v", "x", 2)
            .cas(1, "k", "v", "y", 5, 6)
            .get(1, "k", "y", 7, 8)
            .build());
  }

  @Test
  void sequentialHistory() {
    assertLinearizable(
        new Histories()
            .get(1, "k", null, 0, 1)
            .put(1, "k", "a", 2, 3)
            .get(2, "k", "a", 4, 5)
            .put(2, "k", "b", 6, 7)
            .get(1, "k", "b", 8, 9)
            .delete(1, "k", 10, 11)
            .get(2, "k", null, 12, 13)
            .put(2, "k", "c", 14, 15)
            .get(1, "k", "c", 16, 17)
            .build());
  }

  @Test
  void aReadConcurrentWithAPutMayReturnTheOldOrTheNewValue() {
    for (String seen : new String[] {"old", "new"}) {
      assertLinearizable(
          new Histories()
              .put(1, "k", "old", 0, 10)
              .put(1, "k", "new", 20, 40)
              .get(2, "k", seen, 25, 30)
              .get(3, "k", "new", 41, 42)
              .build());
    }
    // Both at once, from two overlapping reads: the first to see "new" fixes the order after it.
    assertLinearizable(
        new Histories()
            .put(1, "k", "old", 0, 10)
            .put(1, "k", "new", 20, 40)
            .get(2, "k", "old", 21, 30)
            .get(3, "k", "new", 25, 35)
            .build());
  }

  @Test
  void aReadConcurrentWithTwoPutsMayReturnEither() {
    for (String seen : new String[] {"a", "b"}) {
      assertLinearizable(
          new Histories()
              .put(1, "k", "a", 0, 10)
              .put(2, "k", "b", 0, 10)
              .get(3, "k", seen, 5, 15)
              .get(3, "k", seen, 16, 17)
              .build());
    }
    // "b" first then "a": the later read must see "a".
    assertLinearizable(
        new Histories()
            .put(1, "k", "a", 0, 10)
            .put(2, "k", "b", 2, 12)
            .get(3, "k", "b", 5, 6)
            .get(3, "k", "a", 20, 21)
            .build());
  }

  @Test
  void anUnknownPutMayTakeEffectLongAfterTheClientGaveUp() {
    assertLinearizable(
        new Histories()
            .put(1, "k", "a", 0, 1)
            .putUnknown(1, "k", "b", 2)
            .get(2, "k", "a", 10, 11)
            .get(2, "k", "a", 50, 51)
            .get(2, "k", "b", 100, 101)
            .get(3, "k", "b", 102, 103)
            .build());
  }

  @Test
  void anUnknownPutMayNeverTakeEffect() {
    assertLinearizable(
        new Histories()
            .put(1, "k", "a", 0, 1)
            .putUnknown(1, "k", "b", 2)
            .putUnknown(2, "k", "c", 3)
            .get(2, "k", "a", 10, 11)
            .put(3, "k", "d", 20, 21)
            .get(2, "k", "d", 30, 31)
            .build());
  }

  @Test
  void aFailedPutAndFailedReadsLeaveNoTrace() {
    assertLinearizable(
        new Histories()
            .put(1, "k", "a", 0, 1)
            .putFailed(1, "k", "b", 2, 3)
            .getFailed(2, "k", 2)
            .get(2, "k", "a", 4, 5)
            .build());
  }

  @Test
  void deleteThenReadAbsent() {
    assertLinearizable(
        new Histories()
            .put(1, "k", "a", 0, 1)
            .delete(1, "k", 2, 3)
            .get(2, "k", null, 4, 5)
            .build());
    // Concurrent with the delete: either answer.
    for (String seen : new String[] {"a", null}) {
      assertLinearizable(
          new Histories()
              .put(1, "k", "a", 0, 1)
              .delete(1, "k", 2, 10)
              .get(2, "k", seen, 3, 4)
              .build());
    }
    // An UNKNOWN delete that took effect, and one that did not.
    assertLinearizable(
        new Histories()
            .put(1, "k", "a", 0, 1)
            .deleteUnknown(1, "k", 2)
            .get(2, "k", "a", 10, 11)
            .get(2, "k", null, 20, 21)
            .put(2, "k", "b", 30, 31)
            .deleteUnknown(1, "k", 32)
            .get(2, "k", "b", 40, 41)
            .build());
  }

  @Test
  void anUnknownDeleteInvokedAfterTheLastReadOfAbsentBeganMayNeverTakeEffect() {
    // Had the DELETE taken effect by the read of absent's completion (10), "a" would be gone
    // before GET#4; it may simply never have taken effect.
    assertLinearizable(
        new Histories()
            .get(1, "k", null, 0, 10)
            .put(2, "k", "a", 1, 2)
            .deleteUnknown(3, "k", 5)
            .get(2, "k", "a", 11, 12)
            .build());
  }

  @Test
  void touchingIntervalsAreConcurrent() {
    // The read was invoked at the instant the put completed: it may precede it.
    assertLinearizable(new Histories().put(1, "k", "a", 0, 5).get(2, "k", null, 5, 6).build());
  }

  @Test
  void initialValuesAreTheStartingState() {
    assertLinearizable(
        new Histories()
            .get(1, "k", "init", 0, 1)
            .put(1, "k", "a", 2, 3)
            .get(1, "k", "a", 4, 5)
            .get(1, "other", null, 6, 7)
            .build(),
        Map.of(b("k"), b("init")));
  }
}
