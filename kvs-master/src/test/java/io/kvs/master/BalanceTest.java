package io.kvs.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BalanceTest {
  private static RegionDescriptor region(
      long id, String primary, List<String> backups, List<String> joining) {
    return new RegionDescriptor(
        id,
        new byte[] {(byte) id},
        new byte[] {(byte) (id + 1)},
        primary,
        backups,
        joining,
        3,
        RegionState.OPEN);
  }

  private static Map<String, Integer> leadsAfter(
      List<RegionDescriptor> regions, List<Balance.Move> moves) {
    Map<String, Integer> leads = new HashMap<>();
    Map<Long, String> primaries = new HashMap<>();
    regions.forEach(region -> primaries.put(region.id(), region.primary()));
    moves.forEach(move -> primaries.put(move.regionId(), move.target()));
    primaries.values().forEach(primary -> leads.merge(primary, 1, Integer::sum));
    return leads;
  }

  @Test
  void aRestartedServerGetsItsShareOfPrimariesBack() {
    // s3 restarted: it is a backup of every region, s1 and s2 lead all six.
    List<RegionDescriptor> regions = new ArrayList<>();
    for (int i = 1; i <= 6; i++) {
      String primary = i % 2 == 0 ? "s1" : "s2";
      String other = i % 2 == 0 ? "s2" : "s1";
      regions.add(region(i, primary, List.of(other, "s3"), List.of()));
    }
    List<Balance.Move> moves = Balance.plan(regions, Set.of("s1", "s2", "s3"), Set.of());
    assertThat(moves).allSatisfy(move -> assertThat(move.target()).isEqualTo("s3"));
    assertThat(leadsAfter(regions, moves))
        .containsEntry("s1", 2)
        .containsEntry("s2", 2)
        .containsEntry("s3", 2);
  }

  @Test
  void onlyBackupsInSyncThatAreLiveAndNotDecommissionedTakeOver() {
    List<RegionDescriptor> regions =
        List.of(
            region(1, "s1", List.of("s2", "s3"), List.of("s3")), // s3 still joining
            region(2, "s1", List.of("s2", "s4"), List.of()), // s4 decommissioned
            region(3, "s1", List.of("s5"), List.of())); // s5 not live
    List<Balance.Move> moves = Balance.plan(regions, Set.of("s1", "s2", "s3", "s4"), Set.of("s4"));
    assertThat(moves)
        .allSatisfy(move -> assertThat(move.target()).isEqualTo("s2"))
        .extracting(Balance.Move::regionId)
        .doesNotContain(3L);
  }

  @Test
  void aBalancedClusterNeedsNoMove() {
    List<RegionDescriptor> regions =
        List.of(
            region(1, "s1", List.of("s2"), List.of()), region(2, "s2", List.of("s1"), List.of()));
    assertThat(Balance.plan(regions, Set.of("s1", "s2"), Set.of())).isEmpty();
  }
}
