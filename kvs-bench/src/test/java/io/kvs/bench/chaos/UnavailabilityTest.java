package io.kvs.bench.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.Bytes;
import io.kvs.bench.history.History;
import io.kvs.bench.history.Operation;
import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Operation.Outcome;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionState;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class UnavailabilityTest {
  private static final long MS = 1_000_000;

  /** Two regions split at 0x80; keys chaos-0..15 (the first byte spreads them over both). */
  private static final KeySpace KEYS =
      new KeySpace(
          16,
          RegionMap.of(
              List.of(
                  new RegionDescriptor(
                      1,
                      new byte[0],
                      new byte[] {(byte) 0x80},
                      "s1",
                      List.of(),
                      1,
                      RegionState.OPEN),
                  new RegionDescriptor(
                      2,
                      new byte[] {(byte) 0x80},
                      new byte[0],
                      "s2",
                      List.of(),
                      1,
                      RegionState.OPEN))));

  private final List<Operation> operations = new ArrayList<>();

  private void get(int key, long invokeMs, long completeMs, Outcome outcome) {
    operations.add(
        new Operation(
            operations.size(),
            0,
            Kind.GET,
            Bytes.of(KEYS.key(key)),
            null,
            invokeMs * MS,
            completeMs * MS,
            outcome));
  }

  @Test
  void aRegionIsUnavailableFromTheFirstFailedAskUntilTheFirstSuccessAfterIt() {
    int first = 0; // region 1
    int last = 15; // region 2
    get(first, 0, 1, Outcome.OK);
    get(first, 10, 5_010, Outcome.UNKNOWN); // timed out
    get(first, 5_020, 5_021, Outcome.UNKNOWN); // failed at once
    get(first, 6_000, 7_500, Outcome.OK); // served again, slowly
    get(last, 0, 1, Outcome.OK);
    get(last, 9_000, 9_002, Outcome.OK); // nobody asked in between: not unavailable
    Unavailability unavailability = Unavailability.of(new History(operations), KEYS, 10_000 * MS);
    assertThat(unavailability.byRegion().get(1L).millis()).isEqualTo(7_490);
    assertThat(unavailability.byRegion().get(1L).fromNanos()).isEqualTo(10 * MS);
    assertThat(unavailability.byRegion().get(2L).millis()).isEqualTo(2);
    assertThat(unavailability.worst().region()).isEqualTo(1);
  }

  @Test
  void aRegionThatNeverServesAgainIsUnavailableUntilTheEnd() {
    get(3, 100, 200, Outcome.OK);
    get(3, 1_000, 6_000, Outcome.UNKNOWN);
    Unavailability unavailability = Unavailability.of(new History(operations), KEYS, 8_000 * MS);
    assertThat(unavailability.worst().millis()).isEqualTo(7_000);
  }

  @Test
  void everyStretchPastTheBoundIsKeptWithOverlappingWaitsMerged() {
    get(0, 0, 1, Outcome.OK);
    get(0, 1_000, 4_000, Outcome.UNKNOWN); // waits until 8_000: past a 5 s bound
    get(0, 3_000, 5_000, Outcome.UNKNOWN); // inside the same stretch
    get(0, 7_000, 8_000, Outcome.OK);
    get(0, 9_000, 9_001, Outcome.OK);
    get(0, 10_000, 11_000, Outcome.UNKNOWN); // waits 3 s: within the bound
    get(0, 12_000, 13_000, Outcome.OK);
    get(15, 20_000, 21_000, Outcome.UNKNOWN); // region 2 never serves again
    Unavailability unavailability =
        Unavailability.of(new History(operations), KEYS, 30_000 * MS, 5_000);
    assertThat(unavailability.over())
        .containsExactly(
            new Unavailability.Stretch(1, 1_000 * MS, 8_000 * MS),
            new Unavailability.Stretch(2, 20_000 * MS, 30_000 * MS));
    assertThat(unavailability.over().get(0).millis()).isEqualTo(7_000);
    assertThat(Unavailability.of(new History(operations), KEYS, 30_000 * MS).over()).isEmpty();
  }

  @Test
  void whatIsSetAsideComesOffTheStretchesPastTheBoundOnly() {
    get(0, 0, 1, Outcome.OK);
    get(0, 1_000, 8_000, Outcome.OK); // region 1: 7 s, past a 5 s bound
    get(15, 0, 1, Outcome.OK);
    get(15, 1_000, 5_000, Outcome.OK); // region 2: 4 s, within it
    Unavailability unavailability =
        Unavailability.of(new History(operations), KEYS, 10_000 * MS, 5_000);
    // 2.5 s of region 1's stretch set aside leaves 4.5 s, still longer than region 2's 4 s.
    assertThat(unavailability.worstMillisLess((from, to) -> 2_500)).isEqualTo(4_500);
    // All of it set aside: region 2's wait, which had nothing taken off, is the longest.
    assertThat(unavailability.worstMillisLess((from, to) -> 7_000)).isEqualTo(4_000);
    assertThat(unavailability.worstMillisLess((from, to) -> 0)).isEqualTo(7_000);
  }
}
