package io.kvs.bench.elastic;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionState;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The changes the map watch tells apart, however the client's cache shows them. */
class MapWatchTest {
  private static RegionDescriptor region(long id, String start, String end, String primary) {
    return new RegionDescriptor(
        id, Keys.utf8(start), Keys.utf8(end), primary, List.of("s9"), 1, RegionState.OPEN);
  }

  private static List<MapWatch.Kind> kinds(RegionMap before, RegionMap after) {
    return MapWatch.compare(before, after, 1, Map.of(), new HashMap<>(), new HashMap<>()).stream()
        .map(MapWatch.Change::kind)
        .toList();
  }

  @Test
  void aSplitIsSeenWhenItsParentGoesAndDatedWhenItsFirstDaughterWasSeen() {
    RegionMap parent = RegionMap.of(List.of(region(1, "", "", "s1")));
    RegionMap oneDaughter = RegionMap.of(List.of(region(2, "", "m", "s1")));
    RegionMap daughters = RegionMap.of(List.of(region(2, "", "m", "s1"), region(3, "m", "", "s1")));

    List<MapWatch.Change> split =
        MapWatch.compare(parent, daughters, 20, Map.of(2L, 5L), new HashMap<>(), new HashMap<>());
    assertThat(split).singleElement().satisfies(c -> assertThat(c.region()).isEqualTo(1));
    assertThat(split.get(0).kind()).isEqualTo(MapWatch.Kind.SPLIT);
    assertThat(split.get(0).what()).isEqualTo("region 1 into [2, 3]");
    assertThat(split.get(0).atNanos()).isEqualTo(5);
    assertThat(split.get(0).seenNanos()).isEqualTo(20);
    // The cache applies a commit's changes one by one: a sample may show one daughter alone.
    assertThat(kinds(parent, oneDaughter)).containsExactly(MapWatch.Kind.SPLIT);
    assertThat(kinds(oneDaughter, daughters)).isEmpty();
    // ...or the parent gone and no daughter yet: the split is seen when they come, dated before.
    Map<Long, RegionDescriptor> unexplained = new HashMap<>();
    Map<Long, Long> goneAt = new HashMap<>();
    RegionMap none = RegionMap.of(List.of());
    assertThat(MapWatch.compare(parent, none, 7, Map.of(), unexplained, goneAt)).isEmpty();
    List<MapWatch.Change> later =
        MapWatch.compare(none, daughters, 9, Map.of(2L, 9L, 3L, 9L), unexplained, goneAt);
    assertThat(later).singleElement().satisfies(c -> assertThat(c.atNanos()).isEqualTo(7));
    assertThat(unexplained).isEmpty();
  }

  @Test
  void aMergeAndAHandoverAreToldApartFromASplit() {
    RegionMap two = RegionMap.of(List.of(region(4, "", "m", "s1"), region(5, "m", "", "s1")));
    RegionMap merged = RegionMap.of(List.of(region(6, "", "", "s1")));
    RegionMap moved = RegionMap.of(List.of(region(4, "", "m", "s2"), region(5, "m", "", "s1")));

    assertThat(kinds(two, merged)).containsExactly(MapWatch.Kind.MERGE);
    assertThat(kinds(two, moved)).containsExactly(MapWatch.Kind.HANDOVER);
  }
}
