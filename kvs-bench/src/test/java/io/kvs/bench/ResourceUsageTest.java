package io.kvs.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ResourceUsageTest {
  @Test
  void countsThisProcessesCpuAndTheHosts() {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    ResourceUsage before = ResourceUsage.now();
    // Spin until this thread has used 300 ms of CPU, however busy the host
    // is (on a loaded machine that takes longer than 300 ms of wall time).
    long cpuStart = threads.getCurrentThreadCpuTime();
    long spins = 0;
    while (threads.getCurrentThreadCpuTime() - cpuStart < TimeUnit.MILLISECONDS.toNanos(300)) {
      spins++;
    }
    ResourceUsage delta = ResourceUsage.now().since(before);
    assertThat(spins).isPositive();
    assertThat(delta.wallNanos()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(300));
    // The process's CPU includes this thread's 300 ms; its clock ticks in
    // 10 ms steps.
    assertThat(delta.cpuNanos()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(280));
    assertThat(delta.foreignCpuShare()).isBetween(0.0, 1.0);
  }
}
