package io.kvs.bench;

import java.util.concurrent.TimeUnit;

/**
 * Waits until the background work of a storage system in this process (flushes, compactions,
 * garbage collection of logs) has finished, without asking the system: the process is quiet once it
 * has done no device I/O and almost no CPU work for a while. Benchmarks call it after a phase's
 * last operation so that the work a phase caused is charged to it, not to the next phase, and so
 * that every phase starts from a quiet system.
 */
public final class Quiescence {
  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

  /** Device bytes per poll below which the process counts as doing no I/O (log flush ticks). */
  private static final long QUIET_DEVICE_BYTES = 256 << 10;

  /** CPU per poll below which the process counts as idle: 15% of one core. */
  private static final double QUIET_CPU_SHARE = 0.15;

  private Quiescence() {}

  /**
   * Returns once the process has been quiet for {@code quietNanos}, or after {@code maxNanos}.
   *
   * @return how long background work went on: from the call to the start of the quiet period
   */
  public static Result await(long quietNanos, long maxNanos) {
    long start = System.nanoTime();
    long lastBusy = start;
    ResourceUsage previous = ResourceUsage.now();
    while (true) {
      sleep(POLL_NANOS);
      long now = System.nanoTime();
      ResourceUsage current = ResourceUsage.now();
      ResourceUsage delta = current.since(previous);
      previous = current;
      boolean quiet =
          delta.deviceBytes() < QUIET_DEVICE_BYTES
              && delta.cpuNanos() < QUIET_CPU_SHARE * POLL_NANOS;
      if (!quiet) {
        lastBusy = now;
      }
      if (now - lastBusy >= quietNanos) {
        return new Result(lastBusy - start, false);
      }
      if (now - start >= maxNanos) {
        return new Result(now - start, true);
      }
    }
  }

  /**
   * @param busyNanos how long the process stayed busy after the call
   * @param timedOut whether it was still busy when the wait gave up
   */
  public record Result(long busyNanos, boolean timedOut) {}

  private static void sleep(long nanos) {
    try {
      TimeUnit.NANOSECONDS.sleep(nanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for quiescence", e);
    }
  }
}
