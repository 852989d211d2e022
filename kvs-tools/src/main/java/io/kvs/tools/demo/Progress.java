package io.kvs.tools.demo;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * A live progress line for a running phase: operations so far, their rate, elapsed time, errors. On
 * a terminal it is redrawn in place ({@code \r}) a few times a second; otherwise a line is printed
 * every few seconds, so that logs stay readable.
 */
final class Progress implements AutoCloseable {
  private static final long TERMINAL_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
  private static final long LOG_PERIOD_NANOS = TimeUnit.SECONDS.toNanos(5);

  private final PrintStream out;
  private final boolean terminal;
  private final String label;
  private final LongSupplier operations;
  private final LongSupplier errors;
  private final BooleanSupplier quiet;
  private final long start = System.nanoTime();
  private final Thread thread;
  private volatile boolean done;
  private int width;

  Progress(
      PrintStream out,
      boolean terminal,
      String label,
      LongSupplier operations,
      LongSupplier errors,
      BooleanSupplier quiet) {
    this.out = out;
    this.terminal = terminal;
    this.label = label;
    this.operations = operations;
    this.errors = errors;
    this.quiet = quiet;
    this.thread = new Thread(this::run, "kvs-demo-progress");
    thread.setDaemon(true);
    thread.start();
  }

  private void run() {
    long period = terminal ? TERMINAL_PERIOD_NANOS : LOG_PERIOD_NANOS;
    long next = start + period;
    while (!done) {
      long wait = next - System.nanoTime();
      if (wait > 0) {
        synchronized (this) {
          if (done) {
            return;
          }
          try {
            TimeUnit.NANOSECONDS.timedWait(this, wait);
          } catch (InterruptedException e) {
            return;
          }
        }
        continue;
      }
      next += period;
      draw();
    }
  }

  private synchronized void draw() {
    if (done || quiet.getAsBoolean()) {
      return;
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    long count = operations.getAsLong();
    String line =
        String.format(
            Locale.ROOT,
            "    %-8s %6.1f s  %,10d ops  %,8.0f ops/s  errors %d",
            label,
            seconds,
            count,
            count / Math.max(seconds, 1e-3),
            errors.getAsLong());
    if (terminal) {
      out.print("\r" + line + " ".repeat(Math.max(0, width - line.length())));
      width = line.length();
    } else {
      out.println(line);
    }
    out.flush();
  }

  /** Stops the display; on a terminal the line is cleared, for the phase's summary. */
  @Override
  public void close() {
    synchronized (this) {
      done = true;
      notifyAll();
      if (terminal && width > 0 && !quiet.getAsBoolean()) {
        out.print("\r" + " ".repeat(width) + "\r");
        out.flush();
      }
    }
    try {
      thread.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the thread ends on its own at its next wake-up
    }
  }
}
