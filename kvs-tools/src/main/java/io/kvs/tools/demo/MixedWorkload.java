package io.kvs.tools.demo;

import io.kvs.client.KvsClient;
import io.kvs.core.ClosedException;
import io.kvs.core.KeyValue;
import io.kvs.core.KvsException;
import io.kvs.core.cluster.Keys;
import io.kvs.tools.Latencies;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The demo's workload: threads issuing blocking reads, updates and short scans over uniformly
 * chosen keys until a deadline, every answer checked. Thread {@code t} of {@code n} is the only one
 * updating the keys {@code k} with {@code k % n == t}, so it knows their exact versions.
 */
final class MixedWorkload {
  /** The operations, and how often each is picked. */
  enum Op {
    READ(50),
    UPDATE(45),
    SCAN(5);

    final int percent;

    Op(int percent) {
      this.percent = percent;
    }
  }

  /** How many pairs each scan asks for. */
  static final int SCAN_LENGTH = 20;

  private final KvsClient client;
  private final Expected expected;
  private final int threads;
  final AtomicLong done = new AtomicLong();
  final AtomicLong errors = new AtomicLong();
  final AtomicLong wrong = new AtomicLong();
  final AtomicReference<String> firstError = new AtomicReference<>();
  final AtomicReference<String> firstWrong = new AtomicReference<>();

  MixedWorkload(KvsClient client, Expected expected, int threads) {
    this.client = client;
    this.expected = expected;
    this.threads = threads;
  }

  /** Runs every thread for {@code nanos}; returns their latencies merged. */
  Latencies<Op> run(long nanos) throws InterruptedException {
    long deadline = System.nanoTime() + nanos;
    List<Latencies<Op>> perThread = new ArrayList<>();
    List<Thread> running = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Latencies<Op> latencies = new Latencies<>(Op.class);
      perThread.add(latencies);
      int self = t;
      Thread thread =
          new Thread(() -> loop(self, deadline, latencies), "kvs-demo-worker-" + (t + 1));
      thread.start();
      running.add(thread);
    }
    Latencies<Op> all = new Latencies<>(Op.class);
    for (int t = 0; t < threads; t++) {
      running.get(t).join();
      all.add(perThread.get(t));
    }
    return all;
  }

  private void loop(int self, long deadline, Latencies<Op> latencies) {
    SplittableRandom random = new SplittableRandom(self * 7919L + 1);
    int keys = expected.keys();
    while (System.nanoTime() < deadline) {
      int pick = random.nextInt(100);
      Op op = pick < Op.READ.percent ? Op.READ : pick < 100 - Op.SCAN.percent ? Op.UPDATE : Op.SCAN;
      int key = random.nextInt(keys);
      if (op == Op.UPDATE) {
        // Only keys this thread owns: the next one up from the one drawn.
        key = key - key % threads + self;
        if (key >= keys) {
          key = self;
        }
      }
      long start = System.nanoTime();
      try {
        switch (op) {
          case READ -> read(self, key);
          case UPDATE -> update(key);
          case SCAN -> scan(key);
        }
        latencies.record(op, System.nanoTime() - start);
      } catch (ClosedException e) {
        return; // the demo was interrupted and closed the client
      } catch (KvsException e) {
        errors.incrementAndGet();
        firstError.compareAndSet(null, op + " " + Keys.print(DemoData.key(key)) + ": " + e);
      }
      done.incrementAndGet();
    }
  }

  private void read(int self, int key) {
    Optional<byte[]> value = client.get(DemoData.key(key));
    if (!expected.matches(key, value.orElse(null), key % threads == self)) {
      wrong(
          "get of key "
              + key
              + " returned "
              + value.map(v -> v.length + " bytes not as written").orElse("nothing"));
    }
  }

  private void update(int key) {
    int version = expected.version(key) + 1;
    try {
      client.put(DemoData.key(key), DemoData.value(key, version));
    } catch (KvsException e) {
      expected.failed(key, version);
      throw e;
    }
    expected.written(key, version);
  }

  private void scan(int key) {
    List<KeyValue> pairs = client.scan(DemoData.key(key), new byte[0], SCAN_LENGTH);
    byte[] previous = null;
    for (KeyValue pair : pairs) {
      int number = DemoData.keyNumber(pair.key());
      if (number < 0 || DemoData.versionOf(number, pair.value()) < 0) {
        wrong("scan returned a pair not as written, key " + Keys.print(pair.key()));
      } else if (previous != null && Keys.compare(previous, pair.key()) >= 0) {
        wrong("scan returned keys out of order at " + Keys.print(pair.key()));
      }
      previous = pair.key();
    }
  }

  private void wrong(String what) {
    wrong.incrementAndGet();
    firstWrong.compareAndSet(null, what);
  }
}
