package io.kvs.bench.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The machine probe's figures for a window, from its samples. */
class MachineProbeTest {
  private static final long MS = 1_000_000;

  @TempDir Path dir;

  @Test
  void aWindowGetsTheLateWakesInItAndTheCountersGrowthAcrossIt() throws Exception {
    MachineProbe probe = new MachineProbe();
    // Every 100 ms; the wake at 1500 ms came 1200 ms late (the machine stood still from 300 ms on).
    probe.add(new MachineProbe.Sample(100 * MS, 0, 10, 10, 5, 50, 7));
    probe.add(new MachineProbe.Sample(200 * MS, 2 * MS, 10, 10, 5, 60, 7));
    probe.add(new MachineProbe.Sample(300 * MS, 0, 10, 10, 5, 70, 7));
    probe.add(new MachineProbe.Sample(1_500 * MS, 1_200 * MS, 1_010, 610, 305, 90, 1_107));
    probe.add(new MachineProbe.Sample(1_600 * MS, 1 * MS, 1_020, 610, 305, 95, 1_107));
    probe.add(new MachineProbe.Sample(5_000 * MS, 0, 2_000, 1800, 900, 500, 1_207));

    // A window inside the stall sees it: the wake after it reaches back into the window.
    MachineProbe.During inside = probe.during(600 * MS, 900 * MS);
    assertThat(inside.lateMaxMillis()).isEqualTo(1_200);
    assertThat(inside.stealMillis()).isEqualTo(1_000);
    assertThat(inside.ioFullMillis()).isEqualTo(300);

    MachineProbe.During around = probe.during(150 * MS, 1_650 * MS);
    assertThat(around.lateMaxMillis()).isEqualTo(1_200);
    assertThat(around.lateMillis()).isEqualTo(1_203);
    assertThat(around.stealMillis()).isEqualTo(1_010);
    assertThat(around.ioFullMillis()).isEqualTo(300);
    assertThat(around.ioSomeMillis()).isEqualTo(600);
    assertThat(around.cpuMillis()).isEqualTo(45);
    assertThat(around.gcMillis()).as("the campaign JVM's collections").isEqualTo(1_100);

    MachineProbe.During quiet = probe.during(50 * MS, 250 * MS);
    assertThat(quiet.lateMaxMillis()).isEqualTo(2);
    assertThat(quiet.stealMillis()).isZero();

    assertThat(probe.stalls()).containsExactly(new MachineProbe.Stall(1_500 * MS, 1_200));
    // The stall stood the machine still from 300 to 1500 ms; only what lies in a window counts,
    // and a 2 ms late wake (jitter, not a stall) never does.
    assertThat(probe.stoodStillMillis(0, 10_000 * MS)).isEqualTo(1_200);
    assertThat(probe.stoodStillMillis(1_000 * MS, 2_000 * MS)).isEqualTo(500);
    assertThat(probe.stoodStillMillis(600 * MS, 900 * MS)).isEqualTo(300);
    assertThat(probe.stoodStillMillis(150 * MS, 250 * MS)).isZero();
    assertThat(probe.stoodStillMillis(1_600 * MS, 5_000 * MS)).isZero();
  }

  @Test
  void pressureTotalsAreReadInMilliseconds() throws Exception {
    Path io = dir.resolve("io");
    Files.writeString(
        io,
        "some avg10=0.01 avg60=0.06 avg300=0.24 total=8697959289\n"
            + "full avg10=0.01 avg60=0.05 avg300=0.11 total=266554885\n");
    assertThat(MachineProbe.pressureMillis(io, "full")).isEqualTo(266_554);
    assertThat(MachineProbe.pressureMillis(io, "some")).isEqualTo(8_697_959);
    assertThat(MachineProbe.pressureMillis(dir.resolve("absent"), "full")).isZero();
  }

  @Test
  void aStartedProbeSamplesTheMachineUntilClosed() throws Exception {
    MachineProbe probe = MachineProbe.start();
    long from = System.nanoTime();
    long deadline = from + 30_000 * MS;
    while (probe.size() < 4 && System.nanoTime() - deadline < 0) {
      Thread.sleep(20); // polls the condition
    }
    probe.close();
    int sampled = probe.size();
    assertThat(sampled).as("samples within 30 s").isGreaterThanOrEqualTo(4);
    MachineProbe.During during = probe.during(from, System.nanoTime());
    assertThat(during.stealMillis()).isNotNegative();
    assertThat(during.cpuMillis()).isNotNegative();
    assertThat(during.gcMillis()).isNotNegative();
    assertThat(probe.size()).as("no sample after close").isEqualTo(sampled);
  }
}
