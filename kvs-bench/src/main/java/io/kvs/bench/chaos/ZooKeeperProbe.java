package io.kvs.bench.chaos;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

/**
 * How long ZooKeeper took to answer, all campaign long: a session of the campaign's own (30 s, so
 * that it outlives any stall it measures) asks whether the root exists every {@link #PERIOD_NANOS}
 * and records each round trip. Every process's session lives on ZooKeeper's answers: a server whose
 * pings go unanswered for two thirds of its session timeout gives up its session, and its regions.
 * When many sessions lapse at once while the {@link MachineProbe} woke on time, this says whether
 * ZooKeeper itself stood still.
 *
 * <p>Bounded: at most {@link #SAMPLES_MAX} round trips kept (the oldest dropped). A round trip that
 * fails (the connection lost) counts until it failed.
 */
final class ZooKeeperProbe implements AutoCloseable {
  static final long PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  static final int SAMPLES_MAX = 200_000;
  private static final int SESSION_MILLIS = 30_000;

  /** A round trip that ended at {@code nanos} after {@code waitNanos}. */
  record Sample(long nanos, long waitNanos) {}

  private final BoundedSamples<Sample> samples = new BoundedSamples<>(SAMPLES_MAX);
  private final ZooKeeper zookeeper;
  private final Thread thread;
  private volatile boolean stopped;

  private ZooKeeperProbe(ZooKeeper zookeeper) {
    this.zookeeper = zookeeper;
    this.thread = new Thread(this::probe, "chaos-zookeeper-probe");
    thread.setDaemon(true);
  }

  /** A probe not yet started, on no ZooKeeper (tests add samples with {@link #add}). */
  ZooKeeperProbe() {
    this(null);
  }

  /** Starts probing the ZooKeeper at {@code connect}. */
  static ZooKeeperProbe start(String connect) throws IOException {
    ZooKeeperProbe probe = new ZooKeeperProbe(new ZooKeeper(connect, SESSION_MILLIS, event -> {}));
    probe.thread.start();
    return probe;
  }

  private void probe() {
    while (!stopped) {
      long start = System.nanoTime();
      try {
        zookeeper.exists("/", false);
      } catch (KeeperException e) {
        // connection lost or session moved: the wait until then counts
      } catch (InterruptedException e) {
        return;
      }
      long end = System.nanoTime();
      add(new Sample(end, end - start));
      LockSupport.parkNanos(PERIOD_NANOS);
    }
  }

  void add(Sample sample) {
    samples.add(sample);
  }

  /** The longest round trip that overlapped {@code fromNanos}..{@code toNanos}, in milliseconds. */
  long longestWaitMillis(long fromNanos, long toNanos) {
    long longest = 0;
    for (Sample sample : samples.snapshot()) {
      boolean overlaps =
          sample.nanos() - fromNanos >= 0 && sample.nanos() - sample.waitNanos() - toNanos <= 0;
      if (overlaps) {
        longest = Math.max(longest, sample.waitNanos());
      }
    }
    return longest / 1_000_000;
  }

  /** Every round trip of at least {@code atLeastNanos}, in order (as stalls of ZooKeeper). */
  List<MachineProbe.Stall> stalls(long atLeastNanos) {
    return samples.stalls(Sample::nanos, Sample::waitNanos, atLeastNanos);
  }

  @Override
  public void close() {
    stopped = true;
    try {
      if (thread.isAlive()) {
        thread.interrupt();
        thread.join(TimeUnit.SECONDS.toMillis(5));
      }
      if (zookeeper != null) {
        zookeeper.close(1_000);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
