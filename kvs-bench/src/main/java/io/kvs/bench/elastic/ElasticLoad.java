package io.kvs.bench.elastic;

import io.kvs.client.KvsClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The elastic benchmark's load: client threads, each one operation at a time, that insert the
 * loaded keys in order ({@link #INSERT_PERCENT} of operations, until {@code keyCount} are in; then
 * reads of keys already loaded, uniformly, so that every range keeps being asked for while the data
 * stops growing but for the hot range's overwrites), write the hot range ({@link
 * #HOT_WRITE_PERCENT}) and read it (the rest). Every operation goes to the {@link OperationLog}.
 */
final class ElasticLoad {
  static final int INSERT_PERCENT = 50;
  static final int HOT_WRITE_PERCENT = 40;

  private final KvsClient client;
  private final OperationLog log;
  private final int keyCount;
  private final int valueBytes;
  private final AtomicInteger nextKey = new AtomicInteger();
  private final AtomicInteger inserted = new AtomicInteger();
  private final AtomicBoolean stop = new AtomicBoolean();
  private final List<Thread> threads = new ArrayList<>();

  ElasticLoad(KvsClient client, OperationLog log, int keyCount, int valueBytes) {
    this.client = client;
    this.log = log;
    this.keyCount = keyCount;
    this.valueBytes = valueBytes;
  }

  void start(int clients) {
    for (int id = 0; id < clients; id++) {
      int clientId = id;
      Thread thread = new Thread(() -> run(clientId), "elastic-client-" + id);
      thread.setDaemon(true);
      thread.start();
      threads.add(thread);
    }
  }

  /** Whether every key of the load was inserted (acknowledged or not). */
  boolean loaded() {
    return nextKey.get() >= keyCount;
  }

  /** Inserts acknowledged so far. */
  int inserted() {
    return inserted.get();
  }

  /** Stops inserting new keys (the rest of the mix goes on): a load that ran out of time. */
  void stopInserting() {
    nextKey.updateAndGet(next -> Math.max(next, keyCount));
  }

  /** Stops the client threads and waits for them (each at most its operation's timeout). */
  void stop() throws InterruptedException {
    stop.set(true);
    for (Thread thread : threads) {
      thread.join(60_000);
    }
  }

  private void run(int clientId) {
    Random random = new Random(clientId);
    byte[] value = new byte[valueBytes];
    random.nextBytes(value); // random bytes: nothing to compress
    while (!stop.get()) {
      int choice = random.nextInt(100);
      int code;
      boolean insert = false;
      boolean read;
      if (choice < INSERT_PERCENT) {
        int next = nextKey.get() < keyCount ? nextKey.getAndIncrement() : keyCount;
        insert = next < keyCount;
        code = insert ? next : random.nextInt(Math.max(1, inserted.get()));
        read = !insert;
      } else {
        code = LoadKeys.hotCode(random.nextInt(LoadKeys.HOT_KEYS));
        read = choice >= INSERT_PERCENT + HOT_WRITE_PERCENT;
      }
      byte[] key = LoadKeys.key(code);
      long start = log.now();
      boolean ok = false;
      try {
        if (read) {
          client.get(key);
        } else {
          value[0]++; // a new value each write
          client.put(key, value);
        }
        ok = true;
        if (insert) {
          inserted.incrementAndGet();
        }
      } catch (RuntimeException e) {
        // counted as failed: a split or a move may fail an operation in flight
      }
      log.record(start, code, ok);
    }
  }
}
