package io.kvs.bench.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.chaos.FaultKind.Family;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ScheduleTest {
  private static final Schedule.Layout LAYOUT =
      new Schedule.Layout(List.of("s1", "s2", "s3", "s4"), List.of("m1", "m2"), 8, 4000, 10_000);

  private static List<Step> steps(long seed, boolean quick, List<FaultKind> kinds, int count) {
    Schedule schedule = new Schedule(seed, quick, kinds, LAYOUT);
    List<Step> steps = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      steps.add(schedule.step(i));
    }
    return steps;
  }

  @Test
  void theSameSeedGivesTheSameScheduleAndAnotherSeedAnother() {
    assertThat(steps(42, false, FaultKind.all(), 60).toString())
        .isEqualTo(steps(42, false, FaultKind.all(), 60).toString());
    assertThat(steps(42, false, FaultKind.all(), 60).toString())
        .isNotEqualTo(steps(43, false, FaultKind.all(), 60).toString());
    // Drawing step 30 first draws the same steps as drawing them in order.
    Schedule schedule = new Schedule(42, false, FaultKind.all(), LAYOUT);
    Step thirtieth = schedule.step(29);
    assertThat(thirtieth.toString())
        .isEqualTo(steps(42, false, FaultKind.all(), 30).get(29).toString());
  }

  @Test
  void everyRoundHoldsEveryKindOnce() {
    int kinds = FaultKind.values().length;
    List<Step> steps = steps(7, false, FaultKind.all(), kinds * 5);
    for (int round = 0; round < 5; round++) {
      Map<FaultKind, Integer> counts = new EnumMap<>(FaultKind.class);
      for (Step step : steps.subList(round * kinds, (round + 1) * kinds)) {
        counts.merge(step.main().kind(), 1, Integer::sum);
      }
      assertThat(counts).hasSize(kinds).allSatisfy((kind, count) -> assertThat(count).isOne());
    }
  }

  @Test
  void theQuickProfileIsOneRoundWithTwoOverlaps() {
    for (long seed = 0; seed < 20; seed++) {
      Schedule schedule = new Schedule(seed, true, FaultKind.all(), LAYOUT);
      assertThat(schedule.length()).isEqualTo(FaultKind.values().length);
      List<Step> steps = steps(seed, true, FaultKind.all(), schedule.length());
      assertThat(steps.stream().map(step -> step.main().kind()).distinct())
          .hasSize(FaultKind.values().length);
      assertThat(steps.stream().filter(step -> step.overlap() != null)).hasSize(2);
    }
  }

  @Test
  void overlapsNeverTakeTwoServersAwayAndNeverShareAFamily() {
    for (Step step : steps(3, false, FaultKind.all(), 2_000)) {
      if (step.overlap() == null) {
        continue;
      }
      assertThat(step.overlap().kind().family).isNotEqualTo(step.main().kind().family);
      boolean bothServers =
          step.main().kind().family == Family.SERVER
              && step.overlap().kind().family == Family.SERVER;
      assertThat(bothServers).as(step.toString()).isFalse();
      assertThat(step.overlap().kind().family).isNotEqualTo(Family.ADMIN);
    }
  }

  @Test
  void aCutThatKillsItsPrimaryIsNeverJoinedByAMasterFault() {
    int joined = 0;
    for (Step step : steps(5, false, FaultKind.all(), 2_000)) {
      if (step.overlap() == null || step.main().kind() != FaultKind.REPLICATION_CUT) {
        continue;
      }
      joined++;
      if (step.main().thenKill()) {
        assertThat(step.overlap().kind().family).as(step.toString()).isNotEqualTo(Family.MASTER);
      }
    }
    assertThat(joined).as("cuts with an overlapping fault drawn").isPositive();
  }

  @Test
  void aPrimaryKilledWhileCutOffFromEveryBackupIsKilledBeforeTheirStreamsStall() {
    int everyBackup = 0;
    for (Step step : steps(11, false, List.of(FaultKind.REPLICATION_CUT), 300)) {
      if (step.main().thenKill()) {
        boolean fromAll = step.main().target().index() >= Target.EVERY_BACKUP;
        everyBackup += fromAll ? 1 : 0;
        assertThat(step.main().holdMillis())
            .isLessThanOrEqualTo(fromAll ? Schedule.CUT_THEN_KILL_MILLIS : 8_000);
      }
    }
    assertThat(everyBackup).isPositive();
    assertThat(steps(11, true, List.of(FaultKind.REPLICATION_CUT), 1).get(0).main().thenKill())
        .isTrue();
  }

  @Test
  void aLimitedScheduleDrawsOnlyItsKinds() {
    List<FaultKind> kinds = List.of(FaultKind.SERVER_KILL, FaultKind.MASTER_KILL);
    for (Step step : steps(5, false, kinds, 200)) {
      assertThat(step.main().kind()).isIn(kinds);
      if (step.overlap() != null) {
        assertThat(step.overlap().kind()).isIn(kinds);
      }
    }
  }
}
