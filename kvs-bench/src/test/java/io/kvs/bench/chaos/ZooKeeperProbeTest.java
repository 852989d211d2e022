package io.kvs.bench.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The ZooKeeper probe's longest round trip in a window, and its stalls, from its samples. */
class ZooKeeperProbeTest {
  private static final long MS = 1_000_000;

  @Test
  void aRoundTripCountsForEveryWindowItOverlaps() {
    ZooKeeperProbe probe = new ZooKeeperProbe();
    probe.add(new ZooKeeperProbe.Sample(100 * MS, 2 * MS));
    // Asked at 300 ms, answered at 5300 ms: ZooKeeper stood still in between.
    probe.add(new ZooKeeperProbe.Sample(5_300 * MS, 5_000 * MS));
    probe.add(new ZooKeeperProbe.Sample(5_400 * MS, 1 * MS));

    assertThat(probe.longestWaitMillis(1_000 * MS, 2_000 * MS)).isEqualTo(5_000);
    assertThat(probe.longestWaitMillis(5_350 * MS, 5_450 * MS)).isEqualTo(1);
    assertThat(probe.longestWaitMillis(0, 200 * MS)).isEqualTo(2);
    assertThat(probe.longestWaitMillis(6_000 * MS, 7_000 * MS)).isZero();
    assertThat(probe.stalls(MachineProbe.STALL_NANOS))
        .containsExactly(new MachineProbe.Stall(5_300 * MS, 5_000));
    probe.close();
  }
}
