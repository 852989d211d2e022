package io.kvs.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class RegionMapTest {
  private static byte[] k(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static RegionDescriptor region(long id, String start, String end) {
    return new RegionDescriptor(id, k(start), k(end), "s1", List.of("s2"), 1, RegionState.OPEN);
  }

  @Test
  void findsTheRegionOfEveryKeyInUnsignedOrder() {
    RegionMap map =
        RegionMap.of(List.of(region(3, "m", ""), region(1, "", "d"), region(2, "d", "m")));
    assertThat(map.isComplete()).isTrue();
    assertThat(map.regions()).extracting(RegionDescriptor::id).containsExactly(1L, 2L, 3L);
    assertThat(map.regionFor(k("a")).orElseThrow().id()).isEqualTo(1);
    assertThat(map.regionFor(k("d")).orElseThrow().id()).isEqualTo(2);
    assertThat(map.regionFor(k("lzzz")).orElseThrow().id()).isEqualTo(2);
    assertThat(map.regionFor(new byte[] {(byte) 0xff}).orElseThrow().id()).isEqualTo(3);
    assertThat(map.regionFor(new byte[0]).orElseThrow().id()).isEqualTo(1);
    assertThat(map.byId(2)).isPresent();
  }

  @Test
  void theRegionsWithinARangeAreWhatItWasSplitInto() {
    RegionMap map =
        RegionMap.of(
            List.of(
                region(4, "", "d"), region(5, "d", "g"), region(6, "g", "m"), region(3, "m", "")));
    assertThat(map.within(k("d"), k("m"))).extracting(RegionDescriptor::id).containsExactly(5L, 6L);
    assertThat(map.within(k("d"), new byte[0]))
        .extracting(RegionDescriptor::id)
        .containsExactly(5L, 6L, 3L);
    assertThat(map.within(new byte[0], k("e")))
        .extracting(RegionDescriptor::id)
        .containsExactly(4L);
    assertThat(map.within(k("e"), k("f"))).isEmpty();
  }

  @Test
  void gapsFindNothingAndTheNextRegionContinuesAScan() {
    RegionMap map = RegionMap.of(List.of(region(1, "", "d"), region(3, "m", "")));
    assertThat(map.isComplete()).isFalse();
    assertThat(map.regionFor(k("f"))).isEmpty();
    assertThat(map.firstFrom(k("f")).orElseThrow().id()).isEqualTo(3);
    assertThat(map.firstFrom(k("a")).orElseThrow().id()).isEqualTo(1);
  }

  @Test
  void aReverseScanStartsInTheRegionJustBelowItsEnd() {
    RegionMap map =
        RegionMap.of(List.of(region(1, "", "d"), region(2, "d", "m"), region(3, "m", "")));
    assertThat(map.lastBelow(new byte[0]).orElseThrow().id()).isEqualTo(3);
    assertThat(map.lastBelow(k("m")).orElseThrow().id()).isEqualTo(2);
    assertThat(map.lastBelow(k("m\0")).orElseThrow().id()).isEqualTo(3);
    assertThat(map.lastBelow(k("e")).orElseThrow().id()).isEqualTo(2);
    assertThat(map.lastBelow(k("d")).orElseThrow().id()).isEqualTo(1);
    assertThat(map.lastBelow(k("\0")).orElseThrow().id()).isEqualTo(1);
    RegionMap gapped = RegionMap.of(List.of(region(1, "", "d"), region(3, "m", "x")));
    assertThat(gapped.lastBelow(k("f"))).isEmpty();
    assertThat(gapped.lastBelow(new byte[0])).isEmpty();
    assertThat(gapped.lastBelow(k("d")).orElseThrow().id()).isEqualTo(1);
    assertThat(RegionMap.empty().lastBelow(k("a"))).isEmpty();
  }

  @Test
  void overlapsAndDuplicateIdsAreRejected() {
    assertThatThrownBy(() -> RegionMap.of(List.of(region(1, "", "e"), region(2, "d", ""))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("overlap");
    assertThatThrownBy(() -> RegionMap.of(List.of(region(1, "", "d"), region(1, "d", ""))))
        .hasMessageContaining("twice");
    assertThatThrownBy(() -> region(1, "x", "a")).hasMessageContaining("empty key range");
    assertThatThrownBy(
            () -> new RegionDescriptor(1, k(""), k(""), "s1", List.of("s1"), 1, RegionState.OPEN))
        .hasMessageContaining("also a backup");
  }

  @Test
  void descriptorsKnowRolesAndRaiseEpochsOnReassignment() {
    RegionDescriptor r = region(1, "", "");
    assertThat(r.roleOf("s1")).isEqualTo(RegionRole.PRIMARY);
    assertThat(r.roleOf("s2")).isEqualTo(RegionRole.BACKUP);
    assertThat(r.roleOf("s3")).isNull();
    assertThat(r.members()).containsExactly("s1", "s2");
    RegionDescriptor moved = r.reassigned("s2", List.of("s3"));
    assertThat(moved.epoch()).isEqualTo(2);
    assertThat(moved.state()).isEqualTo(RegionState.OPENING);
    assertThat(moved).isNotEqualTo(r);
    assertThat(region(1, "", "")).isEqualTo(r).hasSameHashCodeAs(r);
  }

  @Test
  void splitsAreIncreasingAndCoverTheirKeys() {
    List<byte[]> uniform = ClusterConfig.uniformSplits(32);
    assertThat(uniform).hasSize(31);
    for (int i = 1; i < uniform.size(); i++) {
      assertThat(Keys.compare(uniform.get(i - 1), uniform.get(i))).isNegative();
    }
    List<byte[]> decimal = ClusterConfig.decimalSplits("usertable:user", 10);
    assertThat(decimal).hasSize(9);
    assertThat(new String(decimal.get(0), StandardCharsets.UTF_8)).isEqualTo("usertable:user182");
    new ClusterConfig(10, 2, ReplicationMode.BUILD_INDEX, decimal); // valid
    assertThatThrownBy(() -> new ClusterConfig(3, 1, ReplicationMode.NONE, List.of(k("b"))))
        .hasMessageContaining("split points");
    assertThatThrownBy(() -> new ClusterConfig(3, 2, ReplicationMode.NONE, List.of()))
        .hasMessageContaining("replication factor 1");
  }
}
