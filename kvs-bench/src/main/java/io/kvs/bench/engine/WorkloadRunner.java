package io.kvs.bench.engine;

import io.kvs.bench.DiskUsage;
import io.kvs.bench.Quiescence;
import io.kvs.bench.ResourceUsage;
import io.kvs.bench.engine.KvMix.SizeClass;
import io.kvs.tools.JsonLine;
import io.kvs.tools.Latencies;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs one workload phase against one system with a fixed number of client threads and measures it.
 * Closed loop: each thread issues its next operation when the previous one returns. Open loop (a
 * rate given): each thread issues its share of the rate on a fixed schedule, and an operation's
 * latency counts from its intended start, so that one that waits delays and charges the ones
 * scheduled behind it (coordinated omission corrected).
 *
 * <p>Determinism: each thread draws its operations from its own random stream, seeded from the
 * benchmark seed, the mix, the workload and the thread index only, and the size class of an
 * inserted record depends only on the seed and the record number. Every system therefore receives
 * the same operations; only the interleaving of the threads differs.
 */
public final class WorkloadRunner {
  /** Room for the largest value of the mixes, with slack. */
  private static final int VALUE_BUFFER_BYTES = 4096;

  /** Random value contents, shared read-only; values are slices of it (compression is off). */
  private static final byte[] VALUE_POOL = randomBytes(1 << 16, 0x5eed);

  private final int threads;
  private final long seed;
  private final double theta;

  /**
   * @param threads client threads
   * @param seed the benchmark seed
   * @param theta zipfian skew (YCSB: 0.99)
   */
  public WorkloadRunner(int threads, long seed, double theta) {
    if (threads < 1) {
      throw new IllegalArgumentException("need at least one client thread: " + threads);
    }
    this.threads = threads;
    this.seed = seed;
    this.theta = theta;
  }

  /**
   * Runs {@code operations} operations of {@code workload} (for Load A: inserts the first {@code
   * operations} records) on {@code system}, stopping early after {@code limitNanos}; then waits up
   * to {@code drainLimitNanos} for the background work the phase caused to finish (the process
   * quiet for {@code quietNanos}; no wait if {@code drainLimitNanos} is 0).
   *
   * @param rateOpsPerSec the open loop's rate over all threads; 0 for a closed loop
   */
  public PhaseResult run(
      KvSystem system,
      Dataset dataset,
      Workload workload,
      long operations,
      double rateOpsPerSec,
      long limitNanos,
      long quietNanos,
      long drainLimitNanos) {
    long existing = dataset.inserts().acknowledged();
    if (!workload.isLoad() && existing == 0) {
      throw new IllegalStateException(workload.id() + " needs loaded records");
    }
    long expectedInserts = (long) Math.ceil(operations * workload.proportion(Operation.INSERT));
    // YCSB sizes the zipfian's item space for twice the expected inserts.
    long zipfianItems = existing + 2 * expectedInserts;
    double zeta =
        switch (workload.distribution()) {
          case ZIPFIAN -> ZipfianGenerator.zeta(zipfianItems, theta);
          case LATEST -> ZipfianGenerator.zeta(existing, theta);
          case INSERT_ORDER, PASSES, UNIFORM -> 0;
        };
    java.util.concurrent.atomic.AtomicLong passDraws = new java.util.concurrent.atomic.AtomicLong();

    CountDownLatch ready = new CountDownLatch(threads);
    CountDownLatch start = new CountDownLatch(1);
    List<Client> clients = new ArrayList<>();
    List<Thread> running = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      long share = operations / threads + (i < operations % threads ? 1 : 0);
      KeyChooser chooser =
          switch (workload.distribution()) {
            case ZIPFIAN -> KeyChooser.scrambledZipfian(zipfianItems, theta, zeta);
            case LATEST -> KeyChooser.latest(existing, theta, zeta);
            case INSERT_ORDER, UNIFORM -> KeyChooser.uniform();
            case PASSES -> KeyChooser.passes(passDraws, existing);
          };
      long threadSeed =
          Dataset.mix64(
              seed
                  ^ Dataset.mix64(
                      (dataset.mix().ordinal() + 1L) * 0x9e3779b97f4a7c15L
                          + (workload.ordinal() + 1L) * 0xc2b2ae3d27d4eb4fL
                          + i));
      Client client =
          new Client(system, dataset, workload, chooser, share, threadSeed, ready, start);
      clients.add(client);
      Thread thread = new Thread(client, "bench-client-" + i);
      thread.setDaemon(true);
      running.add(thread);
      thread.start();
    }

    awaitQuietly(ready);
    ResourceUsage before = ResourceUsage.now();
    long startNanos = System.nanoTime();
    long intervalNanos = rateOpsPerSec > 0 ? (long) (threads * 1e9 / rateOpsPerSec) : 0;
    for (int i = 0; i < clients.size(); i++) {
      Client client = clients.get(i);
      client.deadlineNanos = startNanos + limitNanos;
      // Threads' schedules interleave: thread i starts i / threads of an interval later.
      client.intervalNanos = intervalNanos;
      client.firstNanos = startNanos + intervalNanos * i / threads;
    }
    start.countDown();
    for (Thread thread : running) {
      joinQuietly(thread);
    }
    long nanos = System.nanoTime() - startNanos;
    ResourceUsage windowUsage = ResourceUsage.now().since(before);
    Quiescence.Result drain =
        drainLimitNanos > 0
            ? Quiescence.await(quietNanos, drainLimitNanos)
            : new Quiescence.Result(0, false);
    // The quiet period itself is idle time; the little it consumed is counted, harmlessly.
    ResourceUsage usage = ResourceUsage.now().since(before);

    Latencies<Operation> latencies = new Latencies<>(Operation.class);
    long completed = 0;
    long kvBytes = 0;
    long notFound = 0;
    long scanPairs = 0;
    boolean truncated = false;
    for (Client client : clients) {
      if (client.failure != null) {
        throw new IllegalStateException(
            system.name() + " failed in " + workload.id() + ": " + client.failure, client.failure);
      }
      latencies.add(client.latencies);
      completed += client.completed;
      kvBytes += client.kvBytes + client.scans.kvBytes();
      notFound += client.notFound;
      scanPairs += client.scans.pairs();
      truncated |= client.truncated && !workload.timed(); // a timed phase ends so
    }
    DiskUsage.Usage disk = DiskUsage.of(system.directory());
    JsonLine stats = system.stats();
    return new PhaseResult(
        system.name(),
        dataset.mix(),
        workload,
        rateOpsPerSec,
        threads,
        completed,
        nanos,
        truncated,
        kvBytes,
        usage,
        windowUsage,
        drain,
        disk,
        dataset.liveKvBytes(),
        dataset.inserts().acknowledged(),
        notFound,
        scanPairs,
        latencies,
        stats);
  }

  /** One client thread. */
  private static final class Client implements Runnable {
    private final KvSystem system;
    private final Dataset dataset;
    private final Workload workload;
    private final KeyChooser chooser;
    private final long operations;
    private final SplittableRandom random;
    private final CountDownLatch ready;
    private final CountDownLatch start;

    private final byte[] keyBytes = new byte[Keys.KEY_BYTES];
    private final ByteBuffer key = ByteBuffer.allocateDirect(Keys.KEY_BYTES);
    private final ByteBuffer value = ByteBuffer.allocateDirect(VALUE_BUFFER_BYTES);
    final Latencies<Operation> latencies = new Latencies<>(Operation.class);
    final KvSystem.ScanTotals scans = new KvSystem.ScanTotals();
    volatile long deadlineNanos = Long.MAX_VALUE;
    volatile long intervalNanos; // open loop: between this thread's intended starts; 0: closed
    volatile long firstNanos; // open loop: the first intended start
    private long intended; // this operation's intended start (open loop), else 0
    long completed;
    long kvBytes;
    long notFound;
    boolean truncated;
    Throwable failure;

    Client(
        KvSystem system,
        Dataset dataset,
        Workload workload,
        KeyChooser chooser,
        long operations,
        long seed,
        CountDownLatch ready,
        CountDownLatch start) {
      this.system = system;
      this.dataset = dataset;
      this.workload = workload;
      this.chooser = chooser;
      this.operations = operations;
      this.random = new SplittableRandom(seed);
      this.ready = ready;
      this.start = start;
    }

    @Override
    public void run() {
      ready.countDown();
      awaitQuietly(start);
      long deadline = deadlineNanos;
      long interval = intervalNanos;
      long first = firstNanos;
      try {
        for (long i = 0; i < operations; i++) {
          if (System.nanoTime() >= deadline) {
            truncated = true;
            break;
          }
          if (interval > 0) {
            intended = first + i * interval;
            long early;
            while ((early = intended - System.nanoTime()) > 0) {
              LockSupport.parkNanos(early);
            }
          }
          Operation type =
              workload.isLoad() ? Operation.INSERT : workload.choose(random.nextDouble());
          switch (type) {
            case INSERT -> insert();
            case READ -> read();
            case UPDATE -> update();
            case SCAN -> scan();
          }
          completed++;
        }
      } catch (Throwable t) {
        failure = t;
      }
    }

    /** When the operation about to start counts from: its intended start in an open loop. */
    private long startOf(long now) {
      return intervalNanos > 0 ? Math.min(now, intended) : now;
    }

    private void insert() {
      InsertSequence inserts = dataset.inserts();
      long number = inserts.allocate();
      SizeClass sizeClass = dataset.insertClass(number);
      write(number, sizeClass, Operation.INSERT);
      inserts.acknowledge(number);
    }

    private void update() {
      long number = chooser.next(random, dataset.inserts().acknowledged());
      write(number, dataset.mix().draw(random), Operation.UPDATE);
    }

    private void write(long number, SizeClass sizeClass, Operation type) {
      Keys.write(number, keyBytes, key);
      int size = sizeClass.valueBytes();
      value.clear();
      value.put(VALUE_POOL, random.nextInt(VALUE_POOL.length - size), size);
      value.flip();
      long begin = startOf(System.nanoTime());
      system.put(key, value);
      latencies.record(type, System.nanoTime() - begin);
      dataset.written(number, sizeClass);
      kvBytes += Keys.KEY_BYTES + size;
    }

    private void read() {
      long number = chooser.next(random, dataset.inserts().acknowledged());
      Keys.write(number, keyBytes, key);
      long begin = startOf(System.nanoTime());
      int size = system.get(key, value);
      latencies.record(Operation.READ, System.nanoTime() - begin);
      if (size < 0) {
        notFound++;
      } else {
        kvBytes += Keys.KEY_BYTES + size;
      }
    }

    private void scan() {
      long number = chooser.next(random, dataset.inserts().acknowledged());
      Keys.write(number, keyBytes);
      int length = 1 + random.nextInt(Workload.SCAN_LENGTH_MAX);
      long begin = startOf(System.nanoTime());
      system.scan(keyBytes, length, scans);
      latencies.record(Operation.SCAN, System.nanoTime() - begin);
    }
  }

  private static byte[] randomBytes(int size, long seed) {
    byte[] bytes = new byte[size];
    SplittableRandom random = new SplittableRandom(seed);
    for (int i = 0; i < size; i += 8) {
      long bits = random.nextLong();
      for (int j = 0; j < 8 && i + j < size; j++) {
        bytes[i + j] = (byte) (bits >>> (8 * j));
      }
    }
    return bytes;
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  private static void joinQuietly(Thread thread) {
    try {
      thread.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
