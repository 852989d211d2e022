package io.kvs.core.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Waiting for another process (one this JVM did not start) to end. {@link ProcessHandle#onExit()}
 * and {@link ProcessHandle#isAlive()} count a process that exited but was not yet reaped (a zombie)
 * as alive, and the reaper of an orphan may take seconds: a local cluster's processes outlive the
 * command that started them, so their exit is read from {@code /proc/<pid>/stat} as well.
 */
public final class Processes {
  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

  private Processes() {}

  /** Whether {@code process} still runs: alive and not a zombie. */
  public static boolean running(ProcessHandle process) {
    return process.isAlive() && !exitedUnreaped(process.pid());
  }

  /**
   * Waits until {@code process} no longer runs; returns false if it still does after {@code
   * timeout}.
   */
  public static boolean awaitExit(ProcessHandle process, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (running(process)) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      // No event announces a zombie; onExit() would wait for the reaper.
      LockSupport.parkNanos(POLL_NANOS);
    }
    return true;
  }

  private static boolean exitedUnreaped(long pid) {
    try {
      String stat =
          Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.UTF_8);
      // "pid (comm) S ...": the state follows the last ')' (comm may hold any character).
      int end = stat.lastIndexOf(')');
      return end >= 0 && end + 2 < stat.length() && stat.charAt(end + 2) == 'Z';
    } catch (IOException e) {
      return false; // no /proc, or gone meanwhile: isAlive() decides
    }
  }
}
