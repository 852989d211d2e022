package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.History;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.LinearizabilityChecker;
import io.kvs.bench.history.Operation.Outcome;
import io.kvs.bench.history.Verdict;
import io.kvs.client.CasResult;
import io.kvs.client.KvsClient;
import io.kvs.client.NotAppliedException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The fault tests' load: client threads writing (a unique value each, of every size category:
 * small, medium and large, so every log and the device levels see them), deleting and reading a few
 * shared keys, every operation recorded for the linearizability checker (a failed write is recorded
 * as surely not applied only for a {@link NotAppliedException}). The threads share one client, or
 * each opens its own ({@link #startIndependent}: its own connections and region map, so one client
 * may go on with a stale map while another has seen the change).
 */
final class RecordedLoad {
  /** Opens a client for one load thread. */
  interface ClientFactory {
    KvsClient open() throws Exception;
  }

  private final KvsClient client;
  private final ClientFactory clients;
  private final HistoryRecorder recorder;
  private final String keyPrefix;
  private final int keys;
  private final AtomicBoolean stop = new AtomicBoolean();
  private final AtomicInteger acknowledged = new AtomicInteger();
  private final AtomicReference<Exception> failure = new AtomicReference<>();
  private final List<Thread> threads = new ArrayList<>();
  private final Duration operationTimeout;

  /** How many failed operations {@link #stop} describes (the history keeps outcomes only). */
  private static final int ERRORS_KEPT = 20;

  private final AtomicInteger failed = new AtomicInteger();
  private final List<String> errors = Collections.synchronizedList(new ArrayList<>());

  private RecordedLoad(
      KvsClient client,
      ClientFactory clients,
      HistoryRecorder recorder,
      String keyPrefix,
      int keys,
      Duration operationTimeout) {
    this.client = client;
    this.clients = clients;
    this.recorder = recorder;
    this.keyPrefix = keyPrefix;
    this.keys = keys;
    this.operationTimeout = operationTimeout;
  }

  /** Starts {@code clients} threads on {@code keys} keys; client ids are 0..clients-1. */
  static RecordedLoad start(
      KvsClient client,
      HistoryRecorder recorder,
      int clients,
      int keys,
      Duration operationTimeout) {
    return start(client, recorder, clients, "history", keys, operationTimeout);
  }

  /**
   * Starts {@code clients} threads on {@code keys} keys named after {@code keyPrefix} (loads that
   * share a cluster keep to keys of their own); client ids are 0..clients-1.
   */
  static RecordedLoad start(
      KvsClient client,
      HistoryRecorder recorder,
      int clients,
      String keyPrefix,
      int keys,
      Duration operationTimeout) {
    return start(
        new RecordedLoad(client, null, recorder, keyPrefix, keys, operationTimeout), clients);
  }

  /**
   * Starts {@code clients} threads on {@code keys} keys named after {@code keyPrefix}, each through
   * a client of its own that {@code factory} opens (and the thread closes when it stops); the final
   * reads go through {@code client}. Client ids are 0..clients-1.
   */
  static RecordedLoad startIndependent(
      KvsClient client,
      ClientFactory factory,
      HistoryRecorder recorder,
      int clients,
      String keyPrefix,
      int keys,
      Duration operationTimeout) {
    return start(
        new RecordedLoad(client, factory, recorder, keyPrefix, keys, operationTimeout), clients);
  }

  private static RecordedLoad start(RecordedLoad load, int clients) {
    for (int id = 0; id < clients; id++) {
      int clientId = id;
      Thread thread = new Thread(() -> load.run(clientId), "client-" + id);
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

  /**
   * Stops the threads (each finishes its operation, bounded by the operation timeout), then reads
   * every key once as client {@code clients} (the final reads the lost-write check uses).
   */
  void finish() throws Exception {
    stop();
    for (int key = 0; key < keys; key++) {
      byte[] bytes = key(keyPrefix, key);
      recorder.get(threads.size(), bytes, () -> client.get(bytes));
    }
  }

  /**
   * Stops the threads; each finishes its operation, bounded by the operation timeout. Prints the
   * first failed operations' errors, if any.
   */
  void stop() throws InterruptedException {
    stop.set(true);
    for (Thread thread : threads) {
      thread.join(operationTimeout.toMillis() * 3);
      assertThat(thread.isAlive()).as(thread.getName() + " stopped").isFalse();
    }
    if (failed.get() > 0) {
      System.out.printf(
          "RecordedLoad: %d operations failed; the first %d:%n  %s%n",
          failed.get(), errors.size(), String.join(System.lineSeparator() + "  ", errors));
    }
    assertThat(failure.get()).as("a load thread's client failed to open or close").isNull();
  }

  /**
   * Checks {@code history} (linearizable per key, no acknowledged write lost); a history that fails
   * is written to {@code keep} (JSON lines) for a look at it.
   */
  static Verdict check(History history, Path keep) throws IOException {
    Verdict verdict = new LinearizabilityChecker().check(history);
    if (!verdict.isLinearizable() || !verdict.lostWrites().isEmpty()) {
      history.writeJsonLines(keep);
    }
    return verdict;
  }

  /**
   * {@link #check}s {@code history} and asserts what a planned change must keep: linearizable, no
   * acknowledged write lost, and every operation succeeded (a move costs clients a retry, never an
   * error); returns the verdict.
   */
  static Verdict assertAllSucceeded(History history, Path keep) throws IOException {
    Verdict verdict = check(history, keep);
    assertThat(verdict.isLinearizable()).as(verdict.describe()).isTrue();
    assertThat(verdict.lostWrites()).isEmpty();
    List<String> failed =
        history.operations().stream()
            .filter(operation -> operation.outcome() != Outcome.OK)
            .map(Object::toString)
            .limit(5)
            .toList();
    assertThat(failed).as("operations that did not succeed").isEmpty();
    return verdict;
  }

  static byte[] key(String prefix, int i) {
    return (prefix + "-key-" + i).getBytes(StandardCharsets.UTF_8);
  }

  /**
   * The value client {@code clientId} writes in its {@code sequence}th operation: unique, and small
   * (under 120 bytes with its key), medium or large (over 1 KiB) in turn.
   */
  static byte[] value(int clientId, long sequence) {
    byte[] text =
        ("client " + clientId + " write " + sequence + " ").getBytes(StandardCharsets.UTF_8);
    int length = text.length + new int[] {0, 400, 1_500}[(int) (sequence % 3)];
    byte[] value = Arrays.copyOf(text, length);
    Arrays.fill(value, text.length, length, (byte) ('a' + sequence % 26));
    return value;
  }

  private void run(int clientId) {
    if (clients == null) {
      run(clientId, client);
      return;
    }
    try (KvsClient own = clients.open()) {
      run(clientId, own);
    } catch (Exception e) {
      failure.compareAndSet(null, e);
    }
  }

  private void run(int clientId, KvsClient client) {
    Random random = new Random(clientId);
    HistoryRecorder.FailureClassifier classifier =
        e -> e instanceof NotAppliedException ? Outcome.FAILED_NOT_APPLIED : Outcome.UNKNOWN;
    // What this client last saw each key hold (absent: nothing known; an empty Optional: no
    // value): a compare-and-set expects it, and finds it stale when another client wrote since.
    Map<Integer, Optional<byte[]>> seen = new HashMap<>();
    for (long sequence = 0; !stop.get(); sequence++) {
      int index = random.nextInt(keys);
      byte[] key = key(keyPrefix, index);
      int choice = random.nextInt(10);
      try {
        if (choice < 4) {
          byte[] value = value(clientId, sequence);
          recorder.put(clientId, key, value, () -> client.put(key, value), classifier);
          seen.put(index, Optional.of(value));
          acknowledged.incrementAndGet();
        } else if (choice < 5 && seen.containsKey(index)) {
          byte[] value = value(clientId, sequence);
          byte[] expected = seen.get(index).orElse(null);
          HistoryRecorder.Decided decided =
              recorder.compareAndSet(
                  clientId,
                  key,
                  expected,
                  value,
                  () -> {
                    CasResult result = client.compareAndSet(key, expected, value);
                    return new HistoryRecorder.Decided(
                        result.isApplied(), result.current().orElse(null));
                  },
                  classifier);
          seen.put(index, Optional.ofNullable(decided.applied() ? value : decided.current()));
          if (decided.applied()) {
            acknowledged.incrementAndGet();
          }
        } else if (choice < 6) {
          recorder.delete(clientId, key, () -> client.delete(key), classifier);
          seen.put(index, Optional.empty());
          acknowledged.incrementAndGet();
        } else {
          seen.put(index, recorder.get(clientId, key, () -> client.get(key)));
        }
      } catch (Exception expected) {
        // Recorded with its outcome; the fault makes some operations fail. The first few are
        // described (wall clock for the servers' logs, monotonic ms as the history prints them).
        if (failed.incrementAndGet() <= ERRORS_KEPT) {
          errors.add(
              String.format(
                  "%s (%.3f ms) client %d key %s: %s",
                  LocalTime.now(),
                  System.nanoTime() / 1e6,
                  clientId,
                  new String(key, StandardCharsets.UTF_8),
                  expected));
        }
      }
    }
  }
}
