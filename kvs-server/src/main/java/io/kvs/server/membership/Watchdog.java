package io.kvs.server.membership;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's watchdog (docs/ARCHITECTURE.md "Watchdog"): a region server whose shard or
 * replication thread is stuck -- a deadlock, a wake-up missed for good, a system call that never
 * returns -- still heartbeats ZooKeeper and renews its lease, so the master never moves its regions
 * and every request to them times out for ever. The watchdog probes each loop a few times a second
 * (a task posted to a shard, a turn asked of the replication thread) and calls {@code onStuck} once
 * when one has answered none of its probes for the limit; the server then stops, and the master
 * moves its regions as after a crash.
 *
 * <p>Only time the watchdog itself saw pass counts: a probe round that comes late (the process was
 * paused by SIGSTOP, a debugger or the machine) starts every count afresh, so a pause of the whole
 * process, which its session timeout deals with, is never taken for a stuck loop.
 */
public final class Watchdog implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Watchdog.class);

  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "kvs-watchdog");
            thread.setDaemon(true);
            return thread;
          });

  private Watchdog() {}

  /**
   * Starts probing: every {@link #period(Duration)} {@code probe} returns each loop's name and
   * whether it answered the previous probe (sending the next); {@code onStuck} runs once, on the
   * watchdog's thread, with the name of a loop silent for {@code limit} and how long it was.
   */
  public static Watchdog start(
      Duration limit, Supplier<Map<String, Boolean>> probe, BiConsumer<String, Duration> onStuck) {
    Watchdog watchdog = new Watchdog();
    Tracker tracker = new Tracker(limit);
    long period = period(limit).toNanos();
    watchdog.timer.scheduleWithFixedDelay(
        () -> {
          Optional<Tracker.Stuck> stuck;
          try {
            stuck = tracker.observe(System.nanoTime(), probe.get());
          } catch (RuntimeException e) {
            LOG.warn("watchdog probe failed: {}", e.toString());
            return;
          }
          stuck.ifPresent(
              found -> {
                watchdog.timer.shutdown(); // once
                onStuck.accept(found.loop(), found.silent());
              });
        },
        period,
        period,
        TimeUnit.NANOSECONDS);
    return watchdog;
  }

  /** How often the loops are probed: a quarter of the limit, at most once a second. */
  static Duration period(Duration limit) {
    return Duration.ofNanos(Math.min(TimeUnit.SECONDS.toNanos(1), limit.toNanos() / 4));
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }

  /**
   * What the kernel says of the thread a loop's name gives in parentheses ({@code "shard 0
   * (kvs-shard-0)"}): its state and where it waits ({@code /proc/self/task/TID/stat}, {@code
   * wchan}), for the log of a stuck loop; "unknown" if there is no such thread.
   */
  public static String threadState(String loop) {
    int open = loop.lastIndexOf('(');
    int close = loop.lastIndexOf(')');
    if (open < 0 || close < open) {
      return "unknown";
    }
    String name = loop.substring(open + 1, close);
    Path tasks = Path.of("/proc/self/task");
    try (Stream<Path> threads = Files.list(tasks)) {
      return threads
          .filter(task -> name.equals(read(task.resolve("comm"))))
          .map(
              task -> {
                String stat = read(task.resolve("stat"));
                // pid (comm) STATE ...: the state follows the last ')'.
                String state =
                    stat.lastIndexOf(") ") >= 0
                        ? stat.substring(stat.lastIndexOf(") ") + 2).split(" ", 2)[0]
                        : "?";
                return "tid "
                    + task.getFileName()
                    + " state "
                    + state
                    + " waiting in "
                    + read(task.resolve("wchan"));
              })
          .findFirst()
          .orElse("no thread named " + name);
    } catch (IOException e) {
      return "unknown (" + e + ")";
    }
  }

  private static String read(Path file) {
    try {
      return Files.readString(file).trim();
    } catch (IOException e) {
      return "";
    }
  }

  /**
   * What the probes said, loop by loop: how long each has gone without answering, counting only
   * rounds that came on time (within twice the period of the one before).
   */
  static final class Tracker {
    /** A loop silent for {@code silent}, at least the limit. */
    record Stuck(String loop, Duration silent) {}

    private final long limitNanos;
    private final long lateNanos;
    private final Map<String, Long> silentNanos = new HashMap<>();
    private long lastRound = Long.MIN_VALUE;

    Tracker(Duration limit) {
      this.limitNanos = limit.toNanos();
      this.lateNanos = 2 * period(limit).toNanos();
    }

    /**
     * One round of probes at {@code now} (nanoTime) with each loop's answer; a loop silent for the
     * limit, if any.
     */
    Optional<Stuck> observe(long now, Map<String, Boolean> answered) {
      boolean onTime = lastRound != Long.MIN_VALUE && now - lastRound <= lateNanos;
      long elapsed = now - lastRound;
      lastRound = now;
      silentNanos.keySet().retainAll(answered.keySet());
      Stuck stuck = null;
      for (Map.Entry<String, Boolean> loop : answered.entrySet()) {
        if (loop.getValue() || !onTime) {
          // Answered; or the round came late, so what the loop had meanwhile is not known.
          silentNanos.put(loop.getKey(), 0L);
          continue;
        }
        long silent = silentNanos.getOrDefault(loop.getKey(), 0L) + elapsed;
        silentNanos.put(loop.getKey(), silent);
        if (silent >= limitNanos && stuck == null) {
          stuck = new Stuck(loop.getKey(), Duration.ofNanos(silent));
        }
      }
      return Optional.ofNullable(stuck);
    }
  }
}
