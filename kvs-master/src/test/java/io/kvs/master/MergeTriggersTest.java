package io.kvs.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.control.HeldRegion;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The master's own merges ({@link MergeTriggers}): only two neighbours held by the same servers
 * (any two under send-index), both small, small enough together not to split again, cold, rested,
 * quiet, with no load split of their range lately, and none while anything is pending.
 */
class MergeTriggersTest {
  private static final Duration REST = Duration.ofSeconds(60);
  private static final long SECOND = 1_000_000_000L;
  private static final MergeOptions MERGE = new MergeOptions(1000, REST, 50);
  private static final SplitOptions SPLIT = new SplitOptions(100_000, 0, 0, REST);

  private long now = 1_000 * SECOND;
  private final Map<Long, long[]> reported = new HashMap<>(); // id -> {requests, bytes}
  private final List<RegionDescriptor> regions = new ArrayList<>();

  /** Regions 1..n over [i, i+1), all led by s1 with backup s2, except those listed for s3. */
  private void regions(int n, long... ledByS3) {
    for (int i = 1; i <= n; i++) {
      boolean s3 = false;
      for (long id : ledByS3) {
        s3 |= id == i;
      }
      regions.add(
          new RegionDescriptor(
              i,
              i == 1 ? new byte[0] : new byte[] {(byte) i},
              i == n ? new byte[0] : new byte[] {(byte) (i + 1)},
              s3 ? "s3" : "s1",
              List.of("s2"),
              3,
              RegionState.OPEN));
      reported.put((long) i, new long[] {0, 100});
    }
  }

  private Map<String, Map<Long, HeldRegion>> held() {
    Map<String, Map<Long, HeldRegion>> held = new HashMap<>();
    for (RegionDescriptor region : regions) {
      long[] values = reported.get(region.id());
      held.computeIfAbsent(region.primary(), s -> new HashMap<>())
          .put(
              region.id(),
              new HeldRegion(
                  region.id(),
                  3,
                  RegionRole.PRIMARY,
                  true,
                  false,
                  List.of("s2"),
                  List.of(),
                  values[0],
                  List.of(),
                  values[1]));
    }
    return held;
  }

  private Optional<MergeTriggers.Choice> pass(MergeTriggers triggers, boolean pending) {
    return triggers.choose(regions, held(), pending, region -> true, (start, end) -> false, false);
  }

  @Test
  void twoSmallColdNeighboursOfOneGroupMergeOnceRested() {
    regions(3);
    MergeTriggers triggers = new MergeTriggers(MERGE, SPLIT, () -> now);
    assertThat(pass(triggers, false)).as("not rested").isEmpty();
    now += REST.toNanos();
    assertThat(pass(triggers, true)).as("something pending").isEmpty();
    Optional<MergeTriggers.Choice> choice = pass(triggers, false);
    assertThat(choice).isPresent();
    assertThat(choice.get().leftId()).isEqualTo(1);
    assertThat(choice.get().rightId()).isEqualTo(2);
    assertThat(choice.get().why()).contains("100 and 100 bytes");
    assertThat(
            triggers.choose(
                regions, held(), false, region -> region.id() != 2, (s, e) -> false, false))
        .map(MergeTriggers.Choice::leftId)
        .as("region 2 not quiet: not 1+2 nor 2+3")
        .isEmpty();
    assertThat(triggers.choose(regions, held(), false, region -> true, (s, e) -> true, false))
        .as("a load split of their range within the hour")
        .isEmpty();
  }

  @Test
  void neighboursHeldByTheSameServersMergeWhicheverOfThemLeads() {
    regions(3);
    // Region 2 led by s2 with s1 its backup: the same servers as region 1's group, another leader
    // (the merge hands one's leadership to the other's primary first).
    RegionDescriptor two = regions.get(1);
    regions.set(
        1,
        new RegionDescriptor(2, two.start(), two.end(), "s2", List.of("s1"), 3, RegionState.OPEN));
    MergeTriggers triggers = new MergeTriggers(MERGE, SPLIT, () -> now);
    pass(triggers, false);
    now += REST.toNanos();
    assertThat(pass(triggers, false))
        .map(MergeTriggers.Choice::leftId)
        .as("regions 1 and 2: same servers")
        .contains(1L);
  }

  @Test
  void bigHotOrSplitProneRegionsAndOtherGroupsDoNotMerge() {
    regions(3, 2); // region 2 held by s3 and s2: no two neighbours held by the same servers
    MergeTriggers triggers = new MergeTriggers(MERGE, SPLIT, () -> now);
    pass(triggers, false);
    now += REST.toNanos();
    assertThat(pass(triggers, false)).as("different groups").isEmpty();
    assertThat(triggers.choose(regions, held(), false, region -> true, (s, e) -> false, true))
        .map(MergeTriggers.Choice::leftId)
        .as("different groups, but a replica can move (send-index)")
        .contains(1L);

    regions.clear();
    regions(2);
    reported.put(1L, new long[] {0, 1000});
    triggers = new MergeTriggers(MERGE, SPLIT, () -> now);
    pass(triggers, false);
    now += REST.toNanos();
    assertThat(pass(triggers, false)).as("one at --merge-size").isEmpty();

    // Each small, but together past half of what would split the merged region at once.
    MergeTriggers stepped =
        new MergeTriggers(
            new MergeOptions(10_000, REST, 50), new SplitOptions(100_000, 10, 0, REST), () -> now);
    reported.put(1L, new long[] {0, 3});
    reported.put(2L, new long[] {0, 3});
    pass(stepped, false);
    now += REST.toNanos();
    assertThat(pass(stepped, false)).as("6 bytes, which split at 10").isEmpty();
    reported.put(2L, new long[] {0, 1});
    assertThat(pass(stepped, false)).as("4 bytes, under half of 10").isPresent();

    // Hot: 200 requests a second between two samples.
    triggers = new MergeTriggers(MERGE, SPLIT, () -> now);
    reported.put(1L, new long[] {0, 10});
    reported.put(2L, new long[] {0, 10});
    pass(triggers, false);
    now += REST.toNanos();
    reported.put(1L, new long[] {200L * (REST.toNanos() / SECOND), 10});
    assertThat(pass(triggers, false)).as("hot").isEmpty();

    assertThat(
            new MergeTriggers(MergeOptions.OFF, SPLIT, () -> now)
                .choose(regions, held(), false, region -> true, (s, e) -> false, false))
        .as("off")
        .isEmpty();
  }
}
