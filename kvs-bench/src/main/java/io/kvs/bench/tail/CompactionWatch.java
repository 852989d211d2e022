package io.kvs.bench.tail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * How much of a phase had a compaction running somewhere in the cluster: every {@link
 * #INTERVAL_MILLIS} it reads the CPU time of every server's compaction threads ({@code
 * kvs-compact}, from {@code /proc/<pid>/task/<tid>/schedstat}); an interval in which any of them
 * ran counts as compacting. {@link #coverage()} is the fraction of intervals that did since {@link
 * #reset()}.
 */
final class CompactionWatch implements AutoCloseable {
  static final long INTERVAL_MILLIS = 50;

  private final List<Long> pids;
  private final Thread thread;
  private final AtomicLong intervals = new AtomicLong();
  private final AtomicLong compacting = new AtomicLong();
  private volatile boolean running = true;

  CompactionWatch(List<Long> pids) {
    this.pids = List.copyOf(pids);
    this.thread = new Thread(this::watch, "tail-compaction-watch");
    thread.setDaemon(true);
    thread.start();
  }

  void reset() {
    intervals.set(0);
    compacting.set(0);
  }

  /** The fraction of intervals since the last reset in which a compaction ran. */
  double coverage() {
    long all = intervals.get();
    return all == 0 ? 0 : (double) compacting.get() / all;
  }

  private void watch() {
    long before = compactionNanos();
    while (running) {
      try {
        Thread.sleep(INTERVAL_MILLIS); // a sampling period, not a synchronisation
      } catch (InterruptedException e) {
        return;
      }
      long now = compactionNanos();
      intervals.incrementAndGet();
      if (now > before) {
        compacting.incrementAndGet();
      }
      before = now;
    }
  }

  /** CPU nanoseconds of every watched server's compaction threads so far. */
  private long compactionNanos() {
    long total = 0;
    for (long pid : pids) {
      try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
        List<Path> all = new ArrayList<>(tasks.toList());
        for (Path task : all) {
          try {
            if (!Files.readString(task.resolve("comm")).startsWith("kvs-compact")) {
              continue;
            }
            String schedstat = Files.readString(task.resolve("schedstat")).trim();
            total += Long.parseLong(schedstat.substring(0, schedstat.indexOf(' ')));
          } catch (IOException e) {
            // the thread ended meanwhile
          }
        }
      } catch (IOException e) {
        // the server is gone; the phase reports what the others did
      }
    }
    return total;
  }

  @Override
  public void close() {
    running = false;
    thread.interrupt();
    try {
      thread.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
