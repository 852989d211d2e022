package io.kvs.bench.history;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.BatchAtomicity.Batch;
import io.kvs.bench.history.BatchAtomicity.Outcome;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The batch checker passes whole-or-absent outcomes and rejects every kind of wrong one. */
class BatchAtomicityTest {
  private static byte[] b(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static Batch batch(String name, Outcome outcome) {
    return new Batch(name, Map.of(name + "/0", b(name + "0"), name + "/1", b(name + "1")), outcome);
  }

  private static void whole(Map<String, byte[]> read, String name) {
    read.put(name + "/0", b(name + "0"));
    read.put(name + "/1", b(name + "1"));
  }

  @Test
  void wholeOrAbsentAsTheOutcomeAllowsPasses() {
    Map<String, byte[]> read = new HashMap<>();
    whole(read, "a");
    whole(read, "u1");
    List<Batch> batches =
        List.of(
            batch("a", Outcome.ACKNOWLEDGED),
            batch("n", Outcome.NOT_APPLIED),
            batch("u1", Outcome.UNKNOWN),
            batch("u2", Outcome.UNKNOWN));
    assertThat(BatchAtomicity.violations(batches, read)).isEmpty();
  }

  @Test
  void aBatchAppliedInPartIsRejectedWhateverItsOutcome() {
    for (Outcome outcome : Outcome.values()) {
      Map<String, byte[]> read = new HashMap<>();
      read.put("p/1", b("p1"));
      assertThat(BatchAtomicity.violations(List.of(batch("p", outcome)), read))
          .as("%s", outcome)
          .singleElement()
          .asString()
          .contains("applied in part: 1 of its 2");
    }
  }

  @Test
  void anAcknowledgedBatchLostIsRejected() {
    assertThat(BatchAtomicity.violations(List.of(batch("a", Outcome.ACKNOWLEDGED)), Map.of()))
        .singleElement()
        .asString()
        .contains("acknowledged and lost");
  }

  @Test
  void aBatchReportedNotAppliedThatWasIsRejected() {
    Map<String, byte[]> read = new HashMap<>();
    whole(read, "n");
    assertThat(BatchAtomicity.violations(List.of(batch("n", Outcome.NOT_APPLIED)), read))
        .singleElement()
        .asString()
        .contains("not applied, yet applied");
  }

  @Test
  void anotherValueThanTheBatchWroteIsRejected() {
    Map<String, byte[]> read = new HashMap<>();
    whole(read, "a");
    read.put("a/1", b("stale"));
    assertThat(BatchAtomicity.violations(List.of(batch("a", Outcome.ACKNOWLEDGED)), read))
        .singleElement()
        .asString()
        .contains("other values");
  }
}
