package io.kvs.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * A snapshot of what this process has consumed so far: CPU time of all its threads (Java and
 * native: compaction threads of an engine count too) and storage bytes from {@code /proc/self/io}.
 * Benchmarks take one before and one after a measured phase and subtract them.
 *
 * @param cpuNanos user + system CPU time of the whole process
 * @param deviceReadBytes bytes the process caused to be fetched from storage ({@code read_bytes}:
 *     page-cache misses and O_DIRECT reads, not cached reads)
 * @param deviceWriteBytes bytes the process caused to be sent to storage ({@code write_bytes} minus
 *     {@code cancelled_write_bytes}: dirty pages of files truncated or deleted before writeback
 *     never reach the device)
 * @param hostBusyNanos CPU time of the whole host, every process and the kernel, that was not idle
 *     (from {@code /proc/stat}: user, nice, system, irq, softirq and steal, summed over all cores)
 * @param wallNanos {@link System#nanoTime()} at the snapshot (a difference: the elapsed time)
 */
public record ResourceUsage(
    long cpuNanos,
    long deviceReadBytes,
    long deviceWriteBytes,
    long hostBusyNanos,
    long wallNanos) {
  private static final Path PROC_SELF_IO = Paths.get("/proc/self/io");
  private static final Path PROC_STAT = Paths.get("/proc/stat");

  /** {@code /proc/stat} counts in USER_HZ ticks, which Linux fixes at 100 per second. */
  private static final long NANOS_PER_TICK = 10_000_000L;

  /** Takes a snapshot now. */
  public static ResourceUsage now() {
    long[] io = readProcSelfIo();
    return new ResourceUsage(
        processCpuNanos(), io[0], io[1], hostBusyNanosNow(), System.nanoTime());
  }

  /** This snapshot minus an earlier one. */
  public ResourceUsage since(ResourceUsage earlier) {
    return new ResourceUsage(
        cpuNanos - earlier.cpuNanos,
        deviceReadBytes - earlier.deviceReadBytes,
        deviceWriteBytes - earlier.deviceWriteBytes,
        hostBusyNanos - earlier.hostBusyNanos,
        wallNanos - earlier.wallNanos);
  }

  /**
   * For a difference of two snapshots: the share of the host's CPU capacity that other processes
   * (and the hypervisor, through steal time) used meanwhile, 0 to 1. Benchmarks that compare
   * systems run one after another should distrust phases where this is high: the systems did not
   * get the same machine. NaN where {@code /proc/stat} is unavailable.
   */
  public double foreignCpuShare() {
    if (hostBusyNanos < 0 || wallNanos <= 0) {
      return Double.NaN;
    }
    double capacity = (double) wallNanos * cores();
    return Math.max(0, Math.min(1, (hostBusyNanos - cpuNanos) / capacity));
  }

  /** Device bytes read plus written. */
  public long deviceBytes() {
    return deviceReadBytes + deviceWriteBytes;
  }

  /** The cores this JVM may use. */
  public static int cores() {
    return Runtime.getRuntime().availableProcessors();
  }

  /** Whether {@code /proc/self/io} exists here (Linux); without it the I/O fields are zero. */
  public static boolean deviceCountersAvailable() {
    return Files.isReadable(PROC_SELF_IO);
  }

  private static long processCpuNanos() {
    // The com.sun.management extension counts every thread of the process, native ones included.
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      return os.getProcessCpuTime();
    }
    throw new IllegalStateException("this JVM does not report process CPU time");
  }

  /** Non-idle CPU time of the host so far, or -1 without {@code /proc/stat}. */
  private static long hostBusyNanosNow() {
    if (!Files.isReadable(PROC_STAT)) {
      return -1;
    }
    try (BufferedReader lines = Files.newBufferedReader(PROC_STAT)) {
      String line = lines.readLine();
      if (line == null || !line.startsWith("cpu ")) {
        return -1;
      }
      // cpu user nice system idle iowait irq softirq steal guest guest_nice; guest time is
      // already included in user and nice.
      String[] fields = line.trim().split("\\s+");
      long ticks = 0;
      for (int i : new int[] {1, 2, 3, 6, 7, 8}) {
        if (i < fields.length) {
          ticks += Long.parseLong(fields[i]);
        }
      }
      return ticks * NANOS_PER_TICK;
    } catch (IOException | NumberFormatException e) {
      return -1;
    }
  }

  /** Returns {read_bytes, write_bytes - cancelled_write_bytes}. */
  private static long[] readProcSelfIo() {
    if (!deviceCountersAvailable()) {
      return new long[] {0, 0};
    }
    long read = 0;
    long written = 0;
    long cancelled = 0;
    try {
      for (String line : Files.readAllLines(PROC_SELF_IO)) {
        int colon = line.indexOf(':');
        if (colon < 0) {
          continue;
        }
        String name = line.substring(0, colon).trim();
        long value = Long.parseLong(line.substring(colon + 1).trim());
        switch (name) {
          case "read_bytes" -> read = value;
          case "write_bytes" -> written = value;
          case "cancelled_write_bytes" -> cancelled = value;
          default -> {}
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + PROC_SELF_IO, e);
    }
    return new long[] {read, written - cancelled};
  }
}
