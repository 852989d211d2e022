package io.kvs.bench.chaos;

import io.kvs.bench.history.Call;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Operation.Outcome;
import io.kvs.client.CasResult;
import io.kvs.client.KvsClient;
import io.kvs.client.Mutation;
import io.kvs.client.NotAppliedException;
import io.kvs.client.Transport;
import io.kvs.core.KeyValue;
import io.kvs.core.security.SecurityOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The campaign's recorded load: several independent clients, each a {@link KvsClient} of its own
 * (its own connections and its own region map, so that one client's stale map meets a fenced
 * primary while another's has moved on) on a thread of its own, writing (a unique value each),
 * writing atomic batches of two or three neighbouring keys ({@link KvsClient#writeAtomically}:
 * recorded as one put per key, sharing the batch's times and outcome; keys that a region boundary
 * separates are refused whole, recorded as not applied), compare-and-setting, deleting, reading and
 * scanning the {@link KeySpace}, every operation recorded for the checker. A failed write is
 * recorded as surely not applied only for a {@link NotAppliedException}. A scan is recorded as one
 * read per key of its range (each key's value was read at some moment within the scan), so per-key
 * linearizability covers scans too. Each client keeps to a bounded rate, which bounds the history's
 * size and leaves the two-core machine room for recoveries.
 */
final class ChaosLoad {
  private static final int SCAN_KEYS_MAX = 8;
  private static final int BATCH_KEYS_MAX = 3;
  private static final int SCAN_LIMIT = 1_000;
  private static final int FINAL_READS_IN_FLIGHT = 64;
  private static final long FINAL_READS_PAUSE_MILLIS = 500;

  private final String zookeeper;
  private final SecurityOptions security;
  private final KeySpace keys;
  private final HistoryRecorder recorder;
  private final int clients;
  private final int opsPerSecondPerClient;
  private final Duration operationTimeout;
  private final long seed;
  private final Throughput throughput;
  private final AtomicBoolean stop = new AtomicBoolean();
  private final AtomicLong succeeded = new AtomicLong();
  private final AtomicReference<String> trouble = new AtomicReference<>();
  private final List<Thread> threads = new ArrayList<>();
  private final List<KvsClient> kvsClients = new ArrayList<>();
  private final ClientErrors errors = new ClientErrors();

  ChaosLoad(
      String zookeeper,
      SecurityOptions security,
      KeySpace keys,
      HistoryRecorder recorder,
      int clients,
      int opsPerSecondPerClient,
      Duration operationTimeout,
      long seed,
      Throughput throughput) {
    this.zookeeper = zookeeper;
    this.security = security;
    this.keys = keys;
    this.recorder = recorder;
    this.clients = clients;
    this.opsPerSecondPerClient = opsPerSecondPerClient;
    this.operationTimeout = operationTimeout;
    this.seed = seed;
    this.throughput = throughput;
  }

  /** Connects every client and starts its thread. */
  void start() {
    SplittableRandom seeds = new SplittableRandom(seed);
    for (int id = 0; id < clients; id++) {
      KvsClient client = client();
      kvsClients.add(client);
      int clientId = id;
      SplittableRandom random = seeds.split();
      Thread thread = new Thread(() -> run(clientId, client, random), "chaos-client-" + id);
      thread.setDaemon(true);
      threads.add(thread);
    }
    threads.forEach(Thread::start);
  }

  /** Operations that succeeded so far. */
  long succeeded() {
    return succeeded.get();
  }

  /** What failed operations were told (final reads not included). */
  ClientErrors errors() {
    return errors;
  }

  /** Why a client stopped early (the history filled up), or null. */
  String trouble() {
    return trouble.get();
  }

  /**
   * Stops the clients: each finishes its operation (bounded by the operation timeout), then its
   * client closes.
   */
  void stop() throws InterruptedException {
    stop.set(true);
    for (Thread thread : threads) {
      thread.join(operationTimeout.toMillis() * 3);
      if (thread.isAlive()) {
        trouble.compareAndSet(null, thread.getName() + " did not stop");
      }
    }
    kvsClients.forEach(KvsClient::close);
  }

  /**
   * Reads every key once more through a new client (id {@code clients}): the final reads the
   * lost-write check needs. Keys are read {@link #FINAL_READS_IN_FLIGHT} at a time, and those that
   * failed again in later passes until {@code budget} runs out, so that a region that does not
   * answer costs one timeout per pass rather than the others their reads. Returns the keys it could
   * not read.
   */
  List<String> finalReads(Duration budget) throws InterruptedException {
    long deadline = System.nanoTime() + budget.toNanos();
    Set<Integer> unread = new TreeSet<>();
    for (int i = 0; i < keys.size(); i++) {
      unread.add(i);
    }
    try (KvsClient client = client()) {
      while (!unread.isEmpty() && System.nanoTime() < deadline) {
        Semaphore window = new Semaphore(FINAL_READS_IN_FLIGHT);
        Set<Integer> read = ConcurrentHashMap.newKeySet();
        for (int index : unread) {
          window.acquire();
          byte[] key = keys.key(index);
          Call call;
          try {
            call = recorder.invoke(clients, Kind.GET, key, null);
          } catch (HistoryRecorder.HistoryFullException e) {
            trouble.compareAndSet(null, e.getMessage());
            window.release();
            break;
          }
          client
              .getAsync(key)
              .whenComplete(
                  (value, failure) -> {
                    if (failure == null) {
                      call.okRead(value.map(Values::recorded).orElse(null));
                      read.add(index);
                    } else {
                      call.unknown();
                    }
                    window.release();
                  });
        }
        // Every read of the pass has ended once every permit is back (each bounded by the
        // operation timeout).
        window.acquire(FINAL_READS_IN_FLIGHT);
        unread.removeAll(read);
        if (!unread.isEmpty()) {
          // A region that refuses at once must not turn the passes into a busy loop.
          Thread.sleep(FINAL_READS_PAUSE_MILLIS);
        }
      }
    }
    List<String> names = new ArrayList<>();
    for (int index : unread) {
      byte[] key = keys.key(index);
      names.add(new String(key, 1, key.length - 1, StandardCharsets.UTF_8));
    }
    return names;
  }

  private KvsClient client() {
    return KvsClient.builder()
        .zookeeper(zookeeper)
        .cluster("default")
        .transport(Transport.TCP)
        .operationTimeout(operationTimeout)
        .security(security)
        .build();
  }

  private void run(int clientId, KvsClient client, SplittableRandom random) {
    HistoryRecorder.FailureClassifier classifier =
        e -> e instanceof NotAppliedException ? Outcome.FAILED_NOT_APPLIED : Outcome.UNKNOWN;
    long period = TimeUnit.SECONDS.toNanos(1) / opsPerSecondPerClient;
    long next = System.nanoTime();
    // The token this client last saw each key hold (absent: nothing known; an empty Optional: no
    // value): a compare-and-set expects it, and finds it stale when another client wrote since.
    Map<Integer, Optional<String>> seen = new HashMap<>();
    for (long sequence = 0; !stop.get(); sequence++) {
      // A rate limit, not a synchronisation: the client waits for its next slot.
      long wait = next - System.nanoTime();
      if (wait > 0) {
        LockSupport.parkNanos(wait);
      } else if (wait < -TimeUnit.SECONDS.toNanos(1)) {
        next = System.nanoTime(); // fell behind (a fault): no burst to catch up
      }
      next += period;
      int index = random.nextInt(keys.size());
      byte[] key = keys.key(index);
      int choice = random.nextInt(100);
      try {
        if (choice < 35) {
          String token = Values.token(clientId, sequence * BATCH_KEYS_MAX, random);
          byte[] value = Values.value(token);
          Call call =
              recorder.invoke(clientId, Kind.PUT, key, token.getBytes(StandardCharsets.US_ASCII));
          if (write(call, () -> client.put(key, value), classifier)) {
            seen.put(index, Optional.of(token));
          }
        } else if (choice < 40) {
          batch(clientId, client, index, sequence, random, seen, classifier);
        } else if (choice < 45 && seen.containsKey(index)) {
          compareAndSet(
              clientId,
              client,
              index,
              seen,
              Values.token(clientId, sequence * BATCH_KEYS_MAX, random));
        } else if (choice < 55) {
          Call call = recorder.invoke(clientId, Kind.DELETE, key, null);
          if (write(call, () -> client.delete(key), classifier)) {
            seen.put(index, Optional.empty());
          }
        } else if (choice < 90) {
          Call call = recorder.invoke(clientId, Kind.GET, key, null);
          try {
            Optional<byte[]> value = client.get(key);
            call.okRead(value.map(Values::recorded).orElse(null));
            seen.put(index, value.map(v -> ascii(Values.recorded(v))));
            countSuccess();
          } catch (RuntimeException e) {
            errors.record(e);
            call.unknown();
          }
        } else {
          scan(clientId, client, random);
        }
      } catch (HistoryRecorder.HistoryFullException e) {
        trouble.compareAndSet(null, e.getMessage());
        return;
      }
    }
  }

  /** Runs a write and records its outcome; whether it was acknowledged. */
  private boolean write(Call call, Runnable action, HistoryRecorder.FailureClassifier classifier) {
    try {
      action.run();
      call.ok();
      countSuccess();
      return true;
    } catch (RuntimeException e) {
      errors.record(e);
      if (classifier.classify(e) == Outcome.FAILED_NOT_APPLIED) {
        call.failedNotApplied();
      } else {
        call.unknown();
      }
      return false;
    }
  }

  /**
   * An atomic batch putting a unique value under 2 or 3 neighbouring keys from {@code index} (their
   * tokens take the sequence numbers {@code sequence * BATCH_KEYS_MAX + i}): one put per key in the
   * history, each with the batch's outcome.
   */
  private void batch(
      int clientId,
      KvsClient client,
      int index,
      long sequence,
      SplittableRandom random,
      Map<Integer, Optional<String>> seen,
      HistoryRecorder.FailureClassifier classifier) {
    int count = Math.min(keys.size(), 2 + random.nextInt(BATCH_KEYS_MAX - 1));
    int first = Math.min(index, keys.size() - count);
    List<Mutation> mutations = new ArrayList<>();
    List<Call> calls = new ArrayList<>();
    List<String> tokens = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      byte[] key = keys.key(first + i);
      String token = Values.token(clientId, sequence * BATCH_KEYS_MAX + i, random);
      tokens.add(token);
      mutations.add(Mutation.put(key, Values.value(token)));
      calls.add(
          recorder.invoke(clientId, Kind.PUT, key, token.getBytes(StandardCharsets.US_ASCII)));
    }
    try {
      client.writeAtomically(mutations);
      calls.forEach(Call::ok);
      for (int i = 0; i < count; i++) {
        seen.put(first + i, Optional.of(tokens.get(i)));
      }
      countSuccess();
    } catch (RuntimeException e) {
      errors.record(e);
      if (classifier.classify(e) == Outcome.FAILED_NOT_APPLIED) {
        calls.forEach(Call::failedNotApplied);
      } else {
        calls.forEach(Call::unknown);
      }
    }
  }

  /**
   * A compare-and-set of key {@code index} from the token this client last saw it hold to {@code
   * token}: recorded as the CAS it was when applied (or maybe applied), as the read of what it
   * found when not.
   */
  private void compareAndSet(
      int clientId,
      KvsClient client,
      int index,
      Map<Integer, Optional<String>> seen,
      String token) {
    byte[] key = keys.key(index);
    String expectedToken = seen.get(index).orElse(null);
    byte[] expected = expectedToken == null ? null : Values.value(expectedToken);
    Call call =
        recorder.invokeCas(
            clientId,
            key,
            expectedToken == null ? null : expectedToken.getBytes(StandardCharsets.US_ASCII),
            token.getBytes(StandardCharsets.US_ASCII));
    try {
      CasResult result = client.compareAndSet(key, expected, Values.value(token));
      if (result.isApplied()) {
        call.ok();
        seen.put(index, Optional.of(token));
      } else {
        byte[] current = result.current().map(Values::recorded).orElse(null);
        call.notApplied(current);
        seen.put(index, Optional.ofNullable(current).map(ChaosLoad::ascii));
      }
      countSuccess();
    } catch (RuntimeException e) {
      errors.record(e);
      if (e instanceof NotAppliedException) {
        call.failedNotApplied();
      } else {
        call.unknown();
      }
    }
  }

  private static String ascii(byte[] bytes) {
    return new String(bytes, StandardCharsets.US_ASCII);
  }

  /**
   * Scans the keys from a random one to at most {@link #SCAN_KEYS_MAX} further, recording a read of
   * each key of that range: the value the scan returned for it, or absent.
   */
  private void scan(int clientId, KvsClient client, SplittableRandom random) {
    int first = random.nextInt(keys.size() - 1);
    int end = Math.min(keys.size() - 1, first + 1 + random.nextInt(SCAN_KEYS_MAX));
    List<Call> calls = new ArrayList<>();
    for (int i = first; i < end; i++) {
      calls.add(recorder.invoke(clientId, Kind.GET, keys.key(i), null));
    }
    List<KeyValue> found;
    try {
      found = client.scan(keys.key(first), keys.key(end), SCAN_LIMIT);
    } catch (RuntimeException e) {
      errors.record(e);
      calls.forEach(Call::unknown);
      return;
    }
    if (found.size() >= SCAN_LIMIT) {
      calls.forEach(Call::unknown); // cut short: absent keys may lie past the limit
      return;
    }
    byte[][] values = new byte[end - first][];
    for (KeyValue pair : found) {
      int index = keys.indexOf(io.kvs.bench.history.Bytes.of(pair.key()));
      if (index >= first && index < end) {
        values[index - first] = Values.recorded(pair.value());
      }
    }
    for (int i = 0; i < calls.size(); i++) {
      calls.get(i).okRead(values[i]);
    }
    countSuccess();
  }

  private void countSuccess() {
    succeeded.incrementAndGet();
    throughput.count(System.nanoTime());
  }
}
