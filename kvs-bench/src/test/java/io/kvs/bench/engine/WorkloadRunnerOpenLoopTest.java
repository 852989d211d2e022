package io.kvs.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.tools.JsonLine;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The open loop charges the wait of one stalled put to the puts scheduled behind it, where a closed
 * loop counts it once (coordinated omission).
 */
class WorkloadRunnerOpenLoopTest {
  private static final long STALL_MILLIS = 200;

  /** Stores nothing; the 100th put of a phase waits {@link #STALL_MILLIS}. */
  private static final class StallingSystem implements KvSystem {
    final AtomicLong puts = new AtomicLong();

    @Override
    public String name() {
      return "stalling";
    }

    @Override
    public Path directory() {
      return Path.of(".");
    }

    @Override
    public void put(ByteBuffer key, ByteBuffer value) {
      if (puts.incrementAndGet() == 100) {
        try {
          Thread.sleep(STALL_MILLIS); // the stall under test, not synchronisation
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }

    @Override
    public int get(ByteBuffer key, ByteBuffer value) {
      return -1;
    }

    @Override
    public void scan(byte[] start, int count, ScanTotals totals) {}

    @Override
    public JsonLine stats() {
      return new JsonLine();
    }

    @Override
    public void close() {}
  }

  @Test
  void aStalledPutIsChargedToThePutsQueuedBehindItInAnOpenLoopOnly() {
    WorkloadRunner runner = new WorkloadRunner(1, 7, ZipfianGenerator.YCSB_THETA);
    Dataset dataset = new Dataset(KvMix.SD, 7, 1000);
    long limit = TimeUnit.SECONDS.toNanos(30);
    runner.run(new StallingSystem(), dataset, Workload.LOAD_A, 1000, 0, limit, 0, 0);

    // Open loop: 2,000 puts/s for 1,000 puts; 200 ms behind at the 100th, about 400 queue up.
    PhaseResult open =
        runner.run(new StallingSystem(), dataset, Workload.PUTS_50, 1000, 2000, limit, 0, 0);
    assertThat(open.latencies().overall().maxMicros()).isGreaterThanOrEqualTo(STALL_MILLIS * 1000);
    assertThat(open.latencies().overall().p99Micros()).isGreaterThan(150_000);
    assertThat(open.opsPerSec()).isBetween(1000.0, 3000.0);

    // Closed loop, same puts: the stall is one slow put among a thousand.
    PhaseResult closed =
        runner.run(new StallingSystem(), dataset, Workload.PUTS_50, 1000, 0, limit, 0, 0);
    assertThat(closed.latencies().overall().maxMicros())
        .isGreaterThanOrEqualTo(STALL_MILLIS * 1000);
    assertThat(closed.latencies().overall().p99Micros()).isLessThan(10_000);
  }
}
