package io.kvs.bench.chaos;

import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Whether the machine itself stood still during the campaign: a thread of the campaign's JVM asks
 * to sleep {@link #PERIOD_NANOS} and records how late it woke, beside the kernel's counts of the
 * time the CPUs were taken by other guests (steal, {@code /proc/stat}), of the time some task and
 * every task waited on I/O ({@code /proc/pressure/io} "some" and "full") and of the time some task
 * waited for a CPU ({@code /proc/pressure/cpu} "some"). A probe that wakes seconds late means the
 * campaign's load stood still too, and so, most likely, did every process on the machine, ZooKeeper
 * with them: sessions expire then by design. The probe runs in the campaign's JVM, whose load
 * clients time every operation: the JVM's own collections ({@code gcMillis}, from the garbage
 * collectors' beans) are recorded beside it, since a pause of that JVM makes the probe late and
 * every operation in flight look slow without the machine or the cluster standing still. The
 * campaign reports these figures beside every stretch in which a region served no one, with the
 * time the machine stood still in it ({@link #stoodStillMillis}); they explain a stretch, they do
 * not excuse it: the bound is checked on the stretch as measured (on this machine, a VM that
 * reports no steal, a stall and the cluster's own CPU overload come together and cannot be told
 * apart from inside).
 *
 * <p>Bounded: one sample per period, at most {@link #SAMPLES_MAX} kept (the oldest dropped, ~5.5
 * hours). A counter the kernel does not offer reads as 0.
 */
final class MachineProbe implements AutoCloseable {
  static final long PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  static final int SAMPLES_MAX = 200_000;

  /** A wake that came this late is a stall of the machine (listed by {@link #stalls}). */
  static final long STALL_NANOS = TimeUnit.SECONDS.toNanos(1);

  private static final Path STAT = Path.of("/proc/stat");
  private static final Path IO_PRESSURE = Path.of("/proc/pressure/io");
  private static final Path CPU_PRESSURE = Path.of("/proc/pressure/cpu");
  private static final long MILLIS_PER_TICK = 10; // USER_HZ is 100 on Linux

  /** One wake: when, how late, and the kernel's running totals then (milliseconds). */
  record Sample(
      long nanos,
      long lateNanos,
      long stealMillis,
      long ioSomeMillis,
      long ioFullMillis,
      long cpuMillis,
      long gcMillis) {}

  /** What the machine lost during a window. */
  record During(
      long lateMaxMillis,
      long lateMillis,
      long stealMillis,
      long ioSomeMillis,
      long ioFullMillis,
      long cpuMillis,
      long gcMillis) {
    /** "probe woke up to 4400 ms late (4500 ms in all), steal 0 ms, I/O wait some/full ...". */
    String describe() {
      return String.format(
          Locale.ROOT,
          "probe woke up to %d ms late (%d ms in all), steal %d ms, I/O wait some/full %d/%d ms,"
              + " CPU wait %d ms, the campaign's JVM collecting garbage %d ms",
          lateMaxMillis,
          lateMillis,
          stealMillis,
          ioSomeMillis,
          ioFullMillis,
          cpuMillis,
          gcMillis);
    }
  }

  /** A wake at least {@link #STALL_NANOS} late: the machine stood still until {@code nanos}. */
  record Stall(long nanos, long lateMillis) {}

  private final BoundedSamples<Sample> samples = new BoundedSamples<>(SAMPLES_MAX);
  private final Thread thread;
  private volatile boolean stopped;

  /** A probe not yet started (tests add samples with {@link #add}). */
  MachineProbe() {
    thread = new Thread(this::probe, "chaos-machine-probe");
    thread.setDaemon(true);
  }

  /** Starts probing. */
  static MachineProbe start() {
    MachineProbe probe = new MachineProbe();
    probe.record(System.nanoTime(), 0);
    probe.thread.start();
    return probe;
  }

  private void probe() {
    long expected = System.nanoTime() + PERIOD_NANOS;
    while (!stopped) {
      LockSupport.parkNanos(expected - System.nanoTime());
      long now = System.nanoTime();
      if (now - expected < 0) {
        continue; // woken early (spuriously): sleep the rest
      }
      record(now, now - expected);
      expected = now + PERIOD_NANOS;
    }
  }

  private void record(long now, long lateNanos) {
    add(
        new Sample(
            now,
            lateNanos,
            stealMillis(),
            pressureMillis(IO_PRESSURE, "some"),
            pressureMillis(IO_PRESSURE, "full"),
            pressureMillis(CPU_PRESSURE, "some"),
            gcMillis()));
  }

  void add(Sample sample) {
    samples.add(sample);
  }

  /** What the machine lost between {@code fromNanos} and {@code toNanos}. */
  During during(long fromNanos, long toNanos) {
    Sample before = null;
    Sample last = null;
    long lateMax = 0;
    long late = 0;
    for (Sample sample : samples.snapshot()) {
      if (sample.nanos() - fromNanos <= 0) {
        before = sample;
        continue;
      }
      // A wake after the window whose lateness reaches into it counts too.
      if (sample.nanos() - sample.lateNanos() - toNanos > 0) {
        break;
      }
      lateMax = Math.max(lateMax, sample.lateNanos());
      late += sample.lateNanos();
      last = sample;
    }
    if (last == null) {
      return new During(0, 0, 0, 0, 0, 0, 0);
    }
    Sample first = before == null ? last : before;
    return new During(
        lateMax / 1_000_000,
        late / 1_000_000,
        last.stealMillis() - first.stealMillis(),
        last.ioSomeMillis() - first.ioSomeMillis(),
        last.ioFullMillis() - first.ioFullMillis(),
        last.cpuMillis() - first.cpuMillis(),
        last.gcMillis() - first.gcMillis());
  }

  /** How many samples are kept. */
  int size() {
    return samples.size();
  }

  /** Every wake at least {@link #STALL_NANOS} late, in order. */
  List<Stall> stalls() {
    return samples.stalls(Sample::nanos, Sample::lateNanos, STALL_NANOS);
  }

  /**
   * How long the machine stood still between {@code fromNanos} and {@code toNanos}: the part inside
   * the window of every stall (a wake {@code late} ms late at {@code nanos} stood still from {@code
   * nanos - late} on).
   */
  long stoodStillMillis(long fromNanos, long toNanos) {
    long total = 0;
    for (Stall stall : stalls()) {
      long start = stall.nanos() - stall.lateMillis() * 1_000_000;
      long overlap = Math.min(stall.nanos(), toNanos) - Math.max(start, fromNanos);
      total += Math.max(0, overlap);
    }
    return total / 1_000_000;
  }

  @Override
  public void close() {
    stopped = true;
    if (thread.isAlive()) {
      LockSupport.unpark(thread);
      try {
        thread.join(TimeUnit.SECONDS.toMillis(5));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** The time this JVM's garbage collectors took so far, in milliseconds. */
  private static long gcMillis() {
    long total = 0;
    for (GarbageCollectorMXBean collector : ManagementFactory.getGarbageCollectorMXBeans()) {
      total += Math.max(0, collector.getCollectionTime());
    }
    return total;
  }

  /** The CPUs' steal time since boot, summed over CPUs, in milliseconds. */
  private static long stealMillis() {
    try {
      String line = Files.readAllLines(STAT).get(0); // "cpu  user nice system idle ... steal"
      String[] fields = line.trim().split("\\s+");
      return fields.length > 8 ? Long.parseLong(fields[8]) * MILLIS_PER_TICK : 0;
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }

  /** The "total" of {@code file}'s line {@code kind} ("some" or "full"), in milliseconds. */
  static long pressureMillis(Path file, String kind) {
    try {
      for (String line : Files.readAllLines(file)) {
        if (line.startsWith(kind + " ")) {
          int total = line.indexOf("total=");
          return total < 0 ? 0 : Long.parseLong(line.substring(total + 6).trim()) / 1_000;
        }
      }
    } catch (IOException | RuntimeException e) {
      // no pressure accounting here
    }
    return 0;
  }
}
