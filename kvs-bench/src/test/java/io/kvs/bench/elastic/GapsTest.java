package io.kvs.bench.elastic;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A range's gap is what its own operations saw: others' go on meanwhile. */
class GapsTest {
  private static final long MS = 1_000_000;

  @Test
  void theLongestWaitAndTheLongestIntervalBetweenSuccessesOnTheRangeAroundTheChange() {
    OperationLog log = new OperationLog(1 << 16, 0);
    int inside = LoadKeys.hotCode(7); // in [k80, k81)
    int outside = 0;
    while (new String(LoadKeys.key(outside), StandardCharsets.US_ASCII).startsWith("k80")) {
      outside++;
    }
    // Every millisecond for 10 s an operation on each key; the range's stop from 5,000 to 5,300 ms:
    // one operation waits through it, the others on it start after.
    for (long ms = 0; ms < 10_000; ms++) {
      log.record(ms * MS, ms * MS + MS / 2, outside, true);
      if (ms == 5_000) {
        log.record(ms * MS, 5_300 * MS, inside, true);
      } else if (ms < 5_000 || ms > 5_300) {
        log.record(ms * MS, ms * MS + MS / 2, inside, true);
      }
    }
    Gaps gaps = new Gaps(log, 1_500 * MS);

    Gaps.Gap around = gaps.around(5_200 * MS, LoadKeys.HOT_START, LoadKeys.HOT_END);
    assertThat(around.longestWaitMs()).isEqualTo(300);
    assertThat(around.longestGapMs()).isEqualTo(300);
    assertThat(around.failed()).isZero();
    byte[] other = LoadKeys.key(outside);
    byte[] afterOther = java.util.Arrays.copyOf(other, other.length + 1);
    Gaps.Gap elsewhere = gaps.around(5_200 * MS, other, afterOther);
    assertThat(elsewhere.unavailableMs()).isLessThanOrEqualTo(1);
    Gaps.Gap unasked = gaps.around(5_200 * MS, afterOther, LoadKeys.HOT_START);
    assertThat(unasked.operations()).isZero();
    assertThat(unasked.unavailableMs()).isEqualTo(-1);
    // The load ended 600 ms after this change: its window is not measured (it would show the range
    // out until the window's end).
    Gaps.Gap cut = gaps.around(9_400 * MS, LoadKeys.HOT_START, LoadKeys.HOT_END);
    assertThat(cut.operations()).isZero();
    assertThat(cut.unavailableMs()).isEqualTo(-1);
    assertThat(gaps.around(8_400 * MS, LoadKeys.HOT_START, LoadKeys.HOT_END).unavailableMs())
        .isLessThanOrEqualTo(1);
  }

  @Test
  void aStretchNobodyAskedForIsNoGapButOneAfterARefusalIs() {
    OperationLog log = new OperationLog(1 << 16, 0);
    int inside = LoadKeys.hotCode(7);
    // Operations on the range every millisecond but none from 5,000 to 5,300 ms (its clients were
    // busy elsewhere); then one refused at 7,000 ms and nobody else asking until 7,200 ms.
    for (long ms = 0; ms < 10_000; ms++) {
      if (ms == 7_000) {
        log.record(ms * MS, ms * MS + MS / 2, inside, false);
      } else if ((ms < 5_000 || ms > 5_300) && (ms < 7_000 || ms > 7_200)) {
        log.record(ms * MS, ms * MS + MS / 2, inside, true);
      }
    }
    Gaps gaps = new Gaps(log, 1_000 * MS);

    Gaps.Gap idle = gaps.around(5_200 * MS, LoadKeys.HOT_START, LoadKeys.HOT_END);
    assertThat(idle.longestWaitMs()).isLessThanOrEqualTo(1);
    assertThat(idle.unavailableMs()).isLessThanOrEqualTo(1);
    Gaps.Gap refused = gaps.around(7_100 * MS, LoadKeys.HOT_START, LoadKeys.HOT_END);
    assertThat(refused.failed()).isEqualTo(1);
    assertThat(refused.longestGapMs()).isEqualTo(201); // 7,000 to the success ending at 7,201.5
  }
}
