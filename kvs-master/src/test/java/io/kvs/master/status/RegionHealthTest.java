package io.kvs.master.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.control.HeldRegion;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RegionHealthTest {
  private static final RegionDescriptor OPEN =
      new RegionDescriptor(1, new byte[0], new byte[0], "s1", List.of("s2"), 11, RegionState.OPEN);

  private static Map<String, Map<Long, HeldRegion>> held(HeldRegion... s1s2) {
    Map<String, Map<Long, HeldRegion>> held = new HashMap<>();
    held.put("s1", s1s2[0] == null ? Map.of() : Map.of(1L, s1s2[0]));
    held.put("s2", s1s2[1] == null ? Map.of() : Map.of(1L, s1s2[1]));
    return held;
  }

  @Test
  void servingWhenEveryMemberHoldsItAsTheMapSays() {
    RegionHealth health =
        RegionHealth.of(
            OPEN,
            held(
                new HeldRegion(1, 11, RegionRole.PRIMARY),
                new HeldRegion(1, 11, RegionRole.BACKUP)),
            2);
    assertThat(health.health()).isEqualTo(RegionHealth.SERVING);
    assertThat(health.detail()).isEmpty();
  }

  @Test
  void anOpenRegionAMemberClosedIsNotServedWhateverTheMapSays() {
    // The example: a stranger's close at epoch 12 closed region 1 on its primary.
    RegionHealth health =
        RegionHealth.of(OPEN, held(null, new HeldRegion(1, 11, RegionRole.BACKUP)), 2);
    assertThat(health.health()).isEqualTo(RegionHealth.NOT_SERVED);
    assertThat(health.notHeldBy()).containsExactly("s1");
    assertThat(health.detail()).contains("not held at epoch 11", "s1");
  }

  @Test
  void aMemberAtAnotherEpochOrRoleOrGoneDoesNotServeIt() {
    assertThat(
            RegionHealth.of(
                    OPEN,
                    held(
                        new HeldRegion(1, 10, RegionRole.PRIMARY),
                        new HeldRegion(1, 11, RegionRole.BACKUP)),
                    2)
                .notHeldBy())
        .containsExactly("s1");
    assertThat(
            RegionHealth.of(
                    OPEN,
                    held(
                        new HeldRegion(1, 11, RegionRole.PRIMARY),
                        new HeldRegion(1, 11, RegionRole.PRIMARY)),
                    2)
                .notHeldBy())
        .containsExactly("s2");
    Map<String, Map<Long, HeldRegion>> onlyS1 =
        Map.of("s1", Map.of(1L, new HeldRegion(1, 11, RegionRole.PRIMARY)));
    assertThat(RegionHealth.of(OPEN, onlyS1, 2).health()).isEqualTo(RegionHealth.NOT_SERVED);
  }

  @Test
  void aSilentMemberLeavesItUnknown() {
    Map<String, Map<Long, HeldRegion>> held = new HashMap<>();
    held.put("s1", Map.of(1L, new HeldRegion(1, 11, RegionRole.PRIMARY)));
    held.put("s2", null);
    RegionHealth health = RegionHealth.of(OPEN, held, 2);
    assertThat(health.health()).isEqualTo(RegionHealth.UNKNOWN);
    assertThat(health.notAnswered()).containsExactly("s2");
  }

  @Test
  void theMapStateComesFirstThenReplication() {
    Map<String, Map<Long, HeldRegion>> none = held(null, null);
    assertThat(RegionHealth.of(OPEN.withState(RegionState.OFFLINE), none, 2).health())
        .isEqualTo(RegionHealth.OFFLINE);
    assertThat(RegionHealth.of(OPEN.withState(RegionState.OPENING), none, 2).health())
        .isEqualTo(RegionHealth.RECOVERING);
    Map<String, Map<Long, HeldRegion>> both =
        held(new HeldRegion(1, 11, RegionRole.PRIMARY), new HeldRegion(1, 11, RegionRole.BACKUP));
    RegionHealth short1 = RegionHealth.of(OPEN, both, 3);
    assertThat(short1.health()).isEqualTo(RegionHealth.UNDER_REPLICATED);
    assertThat(short1.detail()).isEqualTo("2 of 3 replicas");
    assertThat(RegionHealth.underReplicated(OPEN, 3)).isTrue();
    assertThat(RegionHealth.underReplicated(OPEN, 2)).isFalse();
  }
}
