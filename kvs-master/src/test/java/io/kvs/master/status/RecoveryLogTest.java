package io.kvs.master.status;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

class RecoveryLogTest {
  /** A clock the test moves by hand. */
  private static final class ManualClock extends Clock {
    long millis = 1_000;

    @Override
    public java.time.ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(millis);
    }
  }

  @Test
  void aRecoveryRunsFromItsFirstStepToTheWholeGroup() {
    ManualClock clock = new ManualClock();
    RecoveryLog log = new RecoveryLog(clock);
    log.step(3, "member gone", "members [s1] gone");
    clock.millis += 500;
    log.step(3, "re-replicated", "s4 joins as a backup");
    assertThat(log.regionsInProgress()).containsExactly(3L);
    Recovery running = log.recent().get(0);
    assertThat(running.inProgress()).isTrue();
    assertThat(running.outcome()).isEqualTo(Recovery.IN_PROGRESS);
    assertThat(running.durationMillis(clock.millis)).isEqualTo(500);

    clock.millis += 250;
    log.recovered(3);
    log.recovered(4); // nothing under way: nothing recorded
    List<Recovery> recent = log.recent();
    assertThat(recent).hasSize(1);
    Recovery done = recent.get(0);
    assertThat(done.steps())
        .containsExactly("member gone: members [s1] gone", "re-replicated: s4 joins as a backup");
    assertThat(done.outcome()).isEqualTo(Recovery.RECOVERED);
    assertThat(done.startedAtMillis()).isEqualTo(1_000);
    assertThat(done.endedAtMillis()).isEqualTo(1_750);
    assertThat(done.durationMillis(99_999)).isEqualTo(750);
    assertThat(log.regionsInProgress()).isEmpty();
  }

  @Test
  void leadershipLostAbandonsWhatIsUnderWay() {
    RecoveryLog log = new RecoveryLog(new ManualClock());
    log.step(1, "backup promoted", "primary s1 lost it");
    log.abandonAll();
    assertThat(log.recent()).extracting(Recovery::outcome).containsExactly(Recovery.ABANDONED);
  }

  @Test
  void boundedInRecoveriesStepsAndText() {
    RecoveryLog log = new RecoveryLog(new ManualClock());
    for (long region = 1; region <= RecoveryLog.RECOVERIES_LIMIT + 30; region++) {
      log.step(region, "reopened", "backups [s2] lost it");
      log.recovered(region);
    }
    List<Recovery> recent = log.recent();
    assertThat(recent).hasSize(RecoveryLog.RECOVERIES_LIMIT);
    assertThat(recent.get(0).regionId()).as("newest first").isEqualTo(130);
    assertThat(recent.get(recent.size() - 1).regionId()).as("oldest dropped").isEqualTo(31);

    for (int i = 0; i < RecoveryLog.STEPS_LIMIT + 5; i++) {
      log.step(500, "reopened", "x".repeat(1_000));
    }
    Recovery flapping = log.recent().get(0);
    assertThat(flapping.regionId()).isEqualTo(500);
    assertThat(flapping.steps()).hasSize(RecoveryLog.STEPS_LIMIT);
    assertThat(flapping.stepsDropped()).isEqualTo(5);
    assertThat(flapping.steps().get(0)).hasSize(RecoveryLog.STEP_LENGTH_LIMIT + 3);
    assertThat(log.recent()).hasSize(RecoveryLog.RECOVERIES_LIMIT);
  }
}
