package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.Bytes;
import io.kvs.bench.history.History;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.Operation;
import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Operation.Outcome;
import io.kvs.client.KvsClient;
import io.kvs.client.NotAppliedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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

  /**
   * For every acknowledged write that the final reads (client {@code finalClient}) prove lost, how
   * long before {@code cutNanos} it was acknowledged. A key's final read shows the value of one
   * write (or absence); every acknowledged write invoked after that one surely took effect is lost.
   */
  static List<Duration> lostWrites(History history, long cutNanos, int finalClient) {
    Map<Bytes, List<Operation>> writes = new HashMap<>();
    Map<Bytes, Operation> finalReads = new HashMap<>();
    Map<Bytes, Operation> byValue = new HashMap<>();
    for (Operation operation : history.operations()) {
      if (operation.kind() == Kind.GET) {
        if (operation.client() == finalClient && operation.outcome() == Outcome.OK) {
          finalReads.put(operation.key(), operation);
        }
      } else {
        writes.computeIfAbsent(operation.key(), key -> new ArrayList<>()).add(operation);
        if (operation.kind() == Kind.PUT) {
          byValue.put(operation.value(), operation);
        }
      }
    }
    List<Duration> lost = new ArrayList<>();
    for (Map.Entry<Bytes, Operation> entry : finalReads.entrySet()) {
      Operation read = entry.getValue();
      long sourceDone = Long.MIN_VALUE; // the initial absence
      if (read.value() != null) {
        Operation source = byValue.get(read.value());
        sourceDone = source.outcome() == Outcome.OK ? source.completeNanos() : Long.MAX_VALUE;
      } else {
        for (Operation write : writes.getOrDefault(entry.getKey(), List.of())) {
          if (write.kind() == Kind.DELETE) {
            long done = write.outcome() == Outcome.OK ? write.completeNanos() : Long.MAX_VALUE;
            sourceDone = Math.max(sourceDone, done);
          }
        }
      }
      for (Operation write : writes.getOrDefault(entry.getKey(), List.of())) {
        boolean changes = read.value() != null || write.kind() == Kind.PUT;
        if (write.outcome() == Outcome.OK && changes && write.invokeNanos() > sourceDone) {
          lost.add(Duration.ofNanos(Math.max(0, cutNanos - write.completeNanos())));
        }
      }
    }
    return lost;
  }
}
