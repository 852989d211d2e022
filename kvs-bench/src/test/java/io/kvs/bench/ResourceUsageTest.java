package io.kvs.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ResourceUsageTest {
  @Test
  void countsThisProcessesCpuAndTheHosts() {
    ResourceUsage before = ResourceUsage.now();
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
    long spins = 0;
    while (System.nanoTime() < until) {
      spins++;
    }
    ResourceUsage delta = ResourceUsage.now().since(before);
    assertThat(spins).isPositive();
    assertThat(delta.wallNanos()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(300));
    // CPU clocks tick in 10 ms steps; a 300 ms spin shows at least most of it.
    assertThat(delta.cpuNanos()).isGreaterThan(TimeUnit.MILLISECONDS.toNanos(200));
    assertThat(delta.foreignCpuShare()).isBetween(0.0, 1.0);
  }
}
