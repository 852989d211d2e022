package io.kvs.bench.tail;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Drives {@link RunA} against a cluster: closed loop (a fixed number of operations in flight, for
 * the peak), or open loop at a fixed rate, where operation {@code i} is due at {@code start + i /
 * rate} whatever happened before, and its latency runs from that intended start (coordinated
 * omission corrected: a stall delays every operation due during it, and each is charged). At most
 * {@code maxOutstanding} operations are in flight; one due beyond that waits for a completion and
 * is charged the wait.
 */
final class OpenLoop {
  /** Latencies above this (microseconds) are recorded as this. */
  private static final long HIGHEST_MICROS = TimeUnit.MINUTES.toMicros(10);

  /** How long the end of a phase waits for the operations still in flight. */
  private static final Duration DRAIN = Duration.ofSeconds(60);

  /** What one phase measured. */
  record Result(
      Map<RunA.Op, Histogram> latencies,
      long operations,
      long errors,
      double seconds,
      long[] worstPerTenth) {
    double opsPerSecond() {
      return operations / seconds;
    }
  }

  private OpenLoop() {}

  /** Runs {@code inFlight} operations at a time for {@code duration}; latencies from issue. */
  static Result closed(RunA workload, int inFlight, Duration duration) throws InterruptedException {
    return drive(workload, 0, inFlight, duration);
  }

  /** Issues {@code rate} operations a second for {@code duration}; latencies from intention. */
  static Result open(RunA workload, double rate, int maxOutstanding, Duration duration)
      throws InterruptedException {
    return drive(workload, rate, maxOutstanding, duration);
  }

  /** Open loop at {@code rate} (> 0), or closed loop with {@code window} in flight (rate 0). */
  private static Result drive(RunA workload, double rate, int window, Duration duration)
      throws InterruptedException {
    Map<RunA.Op, Recorder> recorders = new EnumMap<>(RunA.Op.class);
    for (RunA.Op op : RunA.Op.values()) {
      recorders.put(op, new Recorder(HIGHEST_MICROS, 3));
    }
    AtomicLong completed = new AtomicLong();
    AtomicLong errors = new AtomicLong();
    Semaphore permits = new Semaphore(window);
    long start = System.nanoTime();
    long end = start + duration.toNanos();
    // The worst latency of the operations due in each tenth of a second: when the stalls were.
    AtomicLongArray worst = new AtomicLongArray((int) (duration.toMillis() / 100) + 1);
    for (long i = 0; ; i++) {
      long intended;
      if (rate > 0) {
        intended = start + (long) (i * 1e9 / rate);
        if (intended >= end) {
          break;
        }
        long wait;
        while ((wait = intended - System.nanoTime()) > 0) {
          LockSupport.parkNanos(wait);
        }
        permits.acquire();
      } else {
        permits.acquire();
        intended = System.nanoTime();
        if (intended >= end) {
          permits.release();
          break;
        }
      }
      RunA.Op op = workload.nextOp();
      long due = intended;
      workload
          .issue(op)
          .whenComplete(
              (result, failure) -> {
                long micros = (System.nanoTime() - due) / 1000;
                int tenth = (int) Math.min(worst.length() - 1, (due - start) / 100_000_000L);
                worst.accumulateAndGet(tenth, micros, Math::max);
                recorders.get(op).recordValue(Math.min(Math.max(micros, 0), HIGHEST_MICROS));
                if (failure != null) {
                  errors.incrementAndGet();
                }
                completed.incrementAndGet();
                permits.release();
              });
    }
    if (!permits.tryAcquire(window, DRAIN.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new IllegalStateException(
          "operations still in flight " + DRAIN.toSeconds() + " s after the phase ended");
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    Map<RunA.Op, Histogram> latencies = new EnumMap<>(RunA.Op.class);
    recorders.forEach((op, recorder) -> latencies.put(op, recorder.getIntervalHistogram()));
    long[] worstPerTenth = new long[worst.length()];
    for (int i = 0; i < worstPerTenth.length; i++) {
      worstPerTenth[i] = worst.get(i);
    }
    return new Result(latencies, completed.get(), errors.get(), seconds, worstPerTenth);
  }
}
