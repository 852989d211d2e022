package io.kvs.bench.scale;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The master's reconcile passes one by one, from its pass timer ({@code kvs.master.passes}) read
 * every {@link #PERIOD_MILLIS}: a pass takes tens of milliseconds at least and comes at most every
 * few hundred, so nearly every reading that moved saw one pass end (several: their mean is recorded
 * for each). Keeps at most {@link #PASSES_MAX}.
 */
final class PassWatch implements AutoCloseable {
  static final long PERIOD_MILLIS = 50;
  static final int PASSES_MAX = 100_000;

  /** A pass that ended at {@code endedAt} (nanoTime, as read) after {@code millis}. */
  record Pass(long endedAt, double millis) {}

  private final MasterProcess master;
  private final List<Pass> passes = new ArrayList<>(); // under this
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "kvs-sim-pass-watch");
            thread.setDaemon(true);
            return thread;
          });
  private double count = -1;
  private double seconds;

  PassWatch(MasterProcess master) {
    this.master = master;
    timer.scheduleWithFixedDelay(this::read, 0, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
  }

  private void read() {
    double[] now;
    try {
      now = master.passes();
    } catch (Exception e) {
      return; // not serving yet, or stopping
    }
    if (count >= 0 && now[0] > count) {
      double each = (now[1] - seconds) * 1000 / (now[0] - count);
      long at = System.nanoTime();
      synchronized (this) {
        for (int i = 0; i < (int) (now[0] - count) && passes.size() < PASSES_MAX; i++) {
          passes.add(new Pass(at, each));
        }
      }
    }
    count = now[0];
    seconds = now[1];
  }

  /** The passes that ended between {@code from} and {@code to} (nanoTime). */
  synchronized List<Double> between(long from, long to) {
    return passes.stream()
        .filter(pass -> pass.endedAt() >= from && pass.endedAt() <= to)
        .map(Pass::millis)
        .toList();
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
