package io.kvs.bench.history;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Checks that atomic batches were applied whole or not at all: each batch writes keys of its own
 * (no other write touches them), and what a read after the faults finds of its keys must be all of
 * them with the batch's values, or none. An acknowledged batch must be there whole (no acknowledged
 * write lost); one surely not applied must be absent; one whose outcome is unknown may be either,
 * but never in part.
 */
public final class BatchAtomicity {
  private BatchAtomicity() {}

  /** How a batch's write ended, as its client saw it. */
  public enum Outcome {
    ACKNOWLEDGED,
    NOT_APPLIED,
    UNKNOWN
  }

  /**
   * One batch: its writes (key to value, keys no other batch writes) and how it ended.
   *
   * @param name for reports
   * @param writes the keys it put and their values
   * @param outcome what its client was told
   */
  public record Batch(String name, Map<String, byte[]> writes, Outcome outcome) {}

  /**
   * What went wrong, one line per batch that breaks the rules (empty: every batch is whole or
   * absent as its outcome allows).
   *
   * @param batches every batch attempted
   * @param read what a read after the faults found of every batch's keys (absent: no value)
   */
  public static List<String> violations(List<Batch> batches, Map<String, byte[]> read) {
    List<String> violations = new ArrayList<>();
    for (Batch batch : batches) {
      int present = 0;
      List<String> wrong = new ArrayList<>();
      for (Map.Entry<String, byte[]> write : batch.writes().entrySet()) {
        byte[] found = read.get(write.getKey());
        if (found == null) {
          continue;
        }
        present++;
        if (!Arrays.equals(found, write.getValue())) {
          wrong.add(write.getKey());
        }
      }
      int size = batch.writes().size();
      String problem = null;
      if (!wrong.isEmpty()) {
        problem = "keys " + wrong + " hold other values than it wrote";
      } else if (present != 0 && present != size) {
        problem = "applied in part: " + present + " of its " + size + " writes are there";
      } else if (present == 0 && batch.outcome() == Outcome.ACKNOWLEDGED) {
        problem = "acknowledged and lost: none of its " + size + " writes is there";
      } else if (present == size && batch.outcome() == Outcome.NOT_APPLIED) {
        problem = "reported not applied, yet applied";
      }
      if (problem != null) {
        violations.add("batch " + batch.name() + " (" + batch.outcome() + "): " + problem);
      }
    }
    return violations;
  }
}
