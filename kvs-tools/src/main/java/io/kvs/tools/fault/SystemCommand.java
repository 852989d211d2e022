package io.kvs.tools.fault;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a system command (iptables, losetup, mount, kill ...) to its end, bounded by a timeout, and
 * gives its exit status and what it printed (standard output and error together).
 */
public final class SystemCommand {
  /** The bound on every command unless one is given. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

  /** What a command printed and how it ended. */
  public record Result(List<String> command, int status, String output) {
    /** Whether it exited with status 0. */
    public boolean ok() {
      return status == 0;
    }
  }

  private SystemCommand() {}

  /** Runs {@code command} within {@link #DEFAULT_TIMEOUT}. */
  public static Result run(String... command) throws IOException {
    return run(DEFAULT_TIMEOUT, List.of(command));
  }

  /**
   * Runs {@code command} and waits at most {@code timeout} for it (then kills it).
   *
   * @throws IOException if it cannot be started (the message names it) or does not finish in time
   */
  public static Result run(Duration timeout, List<String> command) throws IOException {
    Process process;
    try {
      process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
              .start();
    } catch (IOException e) {
      throw new IOException("cannot run " + String.join(" ", command) + ": " + e.getMessage(), e);
    }
    try {
      // Its output is small (a line or two); read it after the exit, within the same bound.
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        throw new IOException(String.join(" ", command) + " did not finish within " + timeout);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while running " + String.join(" ", command));
    }
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    return new Result(List.copyOf(command), process.exitValue(), output.trim());
  }

  /**
   * Runs {@code command} within {@link #DEFAULT_TIMEOUT} and returns what it printed.
   *
   * @throws IOException if it fails: the message names the command, its status and its output
   */
  public static String require(String... command) throws IOException {
    Result result = run(DEFAULT_TIMEOUT, List.of(command));
    if (!result.ok()) {
      throw new IOException(
          String.join(" ", command)
              + " failed with status "
              + result.status()
              + (result.output().isEmpty() ? "" : ": " + result.output()));
    }
    return result.output();
  }
}
