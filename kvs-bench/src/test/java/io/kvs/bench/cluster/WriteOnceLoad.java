package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.Operation.Outcome;
import io.kvs.client.KvsClient;
import io.kvs.client.NotAppliedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A recorded load whose every write goes to a key of its own (client {@code c}'s {@code n}th new
 * key, spread over every region), so that no later write can hide a lost one: after a fault,
 * reading every key once shows every acknowledged write that did not survive. Each client thread
 * also deletes and reads back keys it wrote before; values are of every size category ({@link
 * RecordedLoad#value}). The threads share one client.
 */
final class WriteOnceLoad {
  private final KvsClient client;
  private final HistoryRecorder recorder;
  private final String prefix;
  private final Duration operationTimeout;
  private final AtomicBoolean stop = new AtomicBoolean();
  private final AtomicInteger acknowledged = new AtomicInteger();
  private final List<Thread> threads = new ArrayList<>();
  // Per client: how many keys it has written (or tried to), keys 0..n-1.
  private final List<AtomicInteger> written = new ArrayList<>();

  private WriteOnceLoad(
      KvsClient client, HistoryRecorder recorder, String prefix, Duration operationTimeout) {
    this.client = client;
    this.recorder = recorder;
    this.prefix = prefix;
    this.operationTimeout = operationTimeout;
  }

  /** Starts {@code clients} threads; client ids are 0..clients-1. */
  static WriteOnceLoad start(
      KvsClient client,
      HistoryRecorder recorder,
      int clients,
      String prefix,
      Duration operationTimeout) {
    WriteOnceLoad load = new WriteOnceLoad(client, recorder, prefix, operationTimeout);
    for (int id = 0; id < clients; id++) {
      load.written.add(new AtomicInteger());
    }
    for (int id = 0; id < clients; id++) {
      int clientId = id;
      Thread thread = new Thread(() -> load.run(clientId), "write-once-" + id);
      thread.start();
      load.threads.add(thread);
    }
    return load;
  }

  /** Writes and deletes acknowledged so far. */
  int acknowledged() {
    return acknowledged.get();
  }

  /** Waits until {@code more} writes beyond those acknowledged now are acknowledged. */
  void awaitMore(int more, Duration timeout) {
    int target = acknowledged.get() + more;
    ProcessCluster.awaitCondition(
        target + " acknowledged writes", timeout, () -> acknowledged.get() >= target);
  }

  /** Stops the threads; each finishes its operation, bounded by the operation timeout. */
  void stop() throws InterruptedException {
    stop.set(true);
    for (Thread thread : threads) {
      thread.join(operationTimeout.toMillis() * 3);
      assertThat(thread.isAlive()).as(thread.getName() + " stopped").isFalse();
    }
  }

  /**
   * Reads every key any client wrote (or tried to), once, as client {@code clients} (the final
   * reads the lost-write check uses); returns how many keys it read.
   */
  int readAll() throws Exception {
    int reader = threads.size();
    int keys = 0;
    for (int id = 0; id < written.size(); id++) {
      for (int n = 0; n < written.get(id).get(); n++) {
        byte[] key = key(id, n);
        recorder.get(reader, key, () -> client.get(key));
        keys++;
      }
    }
    return keys;
  }

  private byte[] key(int clientId, int n) {
    return TestKeys.key(prefix + "-" + clientId, n);
  }

  private void run(int clientId) {
    Random random = new Random(clientId);
    HistoryRecorder.FailureClassifier classifier =
        e -> e instanceof NotAppliedException ? Outcome.FAILED_NOT_APPLIED : Outcome.UNKNOWN;
    AtomicInteger keys = written.get(clientId);
    for (long sequence = 0; !stop.get(); sequence++) {
      int choice = random.nextInt(10);
      try {
        if (choice < 7 || keys.get() == 0) {
          byte[] key = key(clientId, keys.getAndIncrement());
          byte[] value = RecordedLoad.value(clientId, sequence);
          recorder.put(clientId, key, value, () -> client.put(key, value), classifier);
          acknowledged.incrementAndGet();
        } else if (choice < 8) {
          byte[] key = key(clientId, random.nextInt(keys.get()));
          recorder.delete(clientId, key, () -> client.delete(key), classifier);
          acknowledged.incrementAndGet();
        } else {
          byte[] key = key(clientId, random.nextInt(keys.get()));
          recorder.get(clientId, key, () -> client.get(key));
        }
      } catch (Exception expected) {
        // Recorded with its outcome; the fault makes some operations fail.
      }
    }
  }
}
