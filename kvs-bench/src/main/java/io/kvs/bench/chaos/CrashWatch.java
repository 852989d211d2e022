package io.kvs.bench.chaos;

import io.kvs.core.cli.Processes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Watches the cluster's processes for deaths the campaign did not cause: each process the campaign
 * expects to run is looked at every {@link #PERIOD_MILLIS} ms, and one that no longer runs is a
 * crash not injected. The campaign says "down" before it kills a process and "up" with the new pid
 * after it restarted one, so its own kills are never counted. A paused process still runs.
 */
final class CrashWatch implements AutoCloseable {
  static final long PERIOD_MILLIS = 200;

  /** A process that died on its own. */
  record Crash(String name, long pid, long atNanos) {}

  private final Map<String, Long> expected = new ConcurrentHashMap<>();
  private final java.util.Set<Long> seen = ConcurrentHashMap.newKeySet();
  private final List<Crash> crashes = new ArrayList<>();
  private final Thread thread;
  private volatile boolean closed;

  CrashWatch() {
    thread = new Thread(this::run, "chaos-crash-watch");
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /** From now on {@code name} runs as {@code pid}. */
  void up(String name, long pid) {
    seen.add(pid);
    expected.put(name, pid);
  }

  /** Every pid the cluster's processes ever had (for their {@code hs_err} files). */
  java.util.Set<Long> pids() {
    return java.util.Set.copyOf(seen);
  }

  /** From now on {@code name} may be gone (the campaign is about to kill or stop it). */
  void down(String name) {
    expected.remove(name);
  }

  /** Every process expected to run, by name. */
  Map<String, Long> expected() {
    return Map.copyOf(expected);
  }

  /** The crashes seen so far. */
  synchronized List<Crash> crashes() {
    return List.copyOf(crashes);
  }

  /** Looks once (also what the watch thread does every period); returns the crashes found now. */
  List<Crash> check() {
    List<Crash> found = new ArrayList<>();
    expected.forEach(
        (name, pid) -> {
          boolean running = ProcessHandle.of(pid).map(Processes::running).orElse(false);
          // Removed only if still expected as this pid (not restarted meanwhile).
          if (!running && expected.remove(name, pid)) {
            found.add(new Crash(name, pid, System.nanoTime()));
          }
        });
    synchronized (this) {
      crashes.addAll(found);
    }
    return found;
  }

  private void run() {
    while (!closed) {
      check();
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(PERIOD_MILLIS)); // polling /proc
    }
  }

  @Override
  public void close() {
    closed = true;
    thread.interrupt();
  }
}
