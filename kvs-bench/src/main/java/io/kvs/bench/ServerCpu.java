package io.kvs.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * CPU time of other processes (the sum over their threads of {@code
 * /proc/<pid>/task/<tid>/schedstat}) and their threads' context switches.
 */
public final class ServerCpu {
  private ServerCpu() {}

  /** Nanoseconds every thread of {@code pid} has run (threads that exited are not counted). */
  public static long nanos(long pid) throws IOException {
    long total = 0;
    try (DirectoryStream<Path> tasks =
        Files.newDirectoryStream(Path.of("/proc", pid + "", "task"))) {
      for (Path task : tasks) {
        try {
          String stat = Files.readString(task.resolve("schedstat")).trim();
          total += Long.parseLong(stat.substring(0, stat.indexOf(' ')));
        } catch (NoSuchFileException e) {
          // the thread exited meanwhile
        }
      }
    }
    return total;
  }

  /** Nanoseconds every thread of the processes {@code pids} has run. */
  public static long nanos(java.util.Collection<Long> pids) throws IOException {
    long total = 0;
    for (long pid : pids) {
      total += nanos(pid);
    }
    return total;
  }

  /** Voluntary and involuntary context switches of every thread of the processes {@code pids}. */
  public static long contextSwitches(java.util.Collection<Long> pids) throws IOException {
    long total = 0;
    for (long pid : pids) {
      try (DirectoryStream<Path> tasks =
          Files.newDirectoryStream(Path.of("/proc", pid + "", "task"))) {
        for (Path task : tasks) {
          try {
            total += contextSwitches(task);
          } catch (NoSuchFileException e) {
            // the thread exited meanwhile
          }
        }
      }
    }
    return total;
  }

  /** A thread's ({@code /proc/<pid>/task/<tid>}) voluntary and involuntary context switches. */
  public static long contextSwitches(Path task) throws IOException {
    long switches = 0;
    for (String line : Files.readAllLines(task.resolve("status"))) {
      if (line.startsWith("voluntary_ctxt_switches:")
          || line.startsWith("nonvoluntary_ctxt_switches:")) {
        switches += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
      }
    }
    return switches;
  }
}
