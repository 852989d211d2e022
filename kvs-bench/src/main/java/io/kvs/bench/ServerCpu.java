package io.kvs.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * CPU time of another process: the sum over its threads of {@code
 * /proc/<pid>/task/<tid>/schedstat}.
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
}
