package io.kvs.bench.cluster;

import io.kvs.bench.history.Call;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.Operation.Kind;
import io.kvs.client.KvsClient;
import io.kvs.client.NotAppliedException;
import io.kvs.core.KeyValue;
import io.kvs.core.cluster.Keys;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A pipelined load: several clients (each its own {@link KvsClient}: connections and region map of
 * its own), each keeping up to {@code depth} asynchronous operations in flight from one issuing
 * thread. Puts (unique values of every size category), deletes and gets of a shared set of keys
 * spread over every region are recorded for the linearizability checker (a failed write as surely
 * not applied only for a {@link NotAppliedException}); scans and multi-gets read a set of keys
 * written once before the load and never changed ({@link #writeFixed}), so their answers are
 * checked exactly: a scan of a range returns every fixed key in it with its value, a multi-get
 * every fixed value. With no fixed pairs, the load is the recorded operations alone.
 */
final class PipelinedLoad {
  /** Pairs a scan may return: far more than one range holds, so no scan stops at its limit. */
  private static final int SCAN_LIMIT = 5_000;

  /**
   * A scan covers 1/SCAN_SLICES of the key space (keys spread by their first two bytes): a region
   * of a cluster started with {@code --regions 4}, so that a scan reads megabytes of large values
   * in a request or two and is still reading when a demotion drops its region (issue 25, hole 4).
   */
  private static final int SCAN_SLICES = 4;

  private static final int MULTI_GET_KEYS = 16;

  private final List<KvsClient> clients;
  private final HistoryRecorder recorder;
  private final String prefix;
  private final int keys;
  private final int depth;
  private final NavigableMap<byte[], byte[]> fixed;
  private final AtomicBoolean stop = new AtomicBoolean();
  private final AtomicLong writesAcknowledged = new AtomicLong();
  private final AtomicLong scansAnswered = new AtomicLong();
  private final AtomicLong readsAnswered = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();
  private final ConcurrentLinkedQueue<String> wrongAnswers = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
  private final List<Thread> threads = new ArrayList<>();
  private final List<Semaphore> permits = new ArrayList<>();
  private final long started = System.nanoTime();

  private PipelinedLoad(
      List<KvsClient> clients,
      HistoryRecorder recorder,
      String prefix,
      int keys,
      int depth,
      NavigableMap<byte[], byte[]> fixed) {
    this.clients = clients;
    this.recorder = recorder;
    this.prefix = prefix;
    this.keys = keys;
    this.depth = depth;
    this.fixed = fixed;
  }

  /**
   * Writes {@code count} keys of the set {@code fixedPrefix} ({@link Bulk}: mostly large values, so
   * that a scan reads about a megabyte from the device per slice), every write required to succeed;
   * the pairs, in key order, for {@link #start}.
   */
  static NavigableMap<byte[], byte[]> writeFixed(KvsClient client, String fixedPrefix, int count) {
    Bulk.write(client, fixedPrefix, count);
    NavigableMap<byte[], byte[]> pairs = new TreeMap<>(Keys::compare);
    for (int i = 0; i < count; i++) {
      pairs.put(TestKeys.key(fixedPrefix, i), Bulk.value(fixedPrefix, i));
    }
    return pairs;
  }

  /**
   * Starts one issuing thread per client of {@code clients} (client ids 0..n-1 in the history),
   * each with up to {@code depth} operations in flight on {@code keys} keys of the set {@code
   * prefix}, scans and multi-gets reading {@code fixed}.
   */
  static PipelinedLoad start(
      List<KvsClient> clients,
      HistoryRecorder recorder,
      String prefix,
      int keys,
      int depth,
      NavigableMap<byte[], byte[]> fixed) {
    PipelinedLoad load = new PipelinedLoad(clients, recorder, prefix, keys, depth, fixed);
    for (int id = 0; id < clients.size(); id++) {
      int clientId = id;
      Semaphore inFlight = new Semaphore(depth);
      load.permits.add(inFlight);
      Thread thread = new Thread(() -> load.run(clientId, inFlight), "pipelined-" + id);
      thread.start();
      load.threads.add(thread);
    }
    return load;
  }

  /** Writes and deletes acknowledged so far. */
  long writesAcknowledged() {
    return writesAcknowledged.get();
  }

  /** Scans and multi-gets answered (and checked) so far. */
  long scansAnswered() {
    return scansAnswered.get();
  }

  /** Gets answered so far. */
  long readsAnswered() {
    return readsAnswered.get();
  }

  /** Operations of any kind that failed. */
  long failed() {
    return failed.get();
  }

  /** The first failures (kind and exception), at most 20. */
  List<String> failures() {
    return List.copyOf(failures);
  }

  /** Scans or multi-gets that answered something other than the fixed pairs (at most 20). */
  List<String> wrongAnswers() {
    return List.copyOf(wrongAnswers);
  }

  /** Waits until {@code more} writes beyond those acknowledged now are acknowledged. */
  void awaitMoreWrites(long more, java.time.Duration timeout) {
    long target = writesAcknowledged.get() + more;
    ProcessCluster.awaitCondition(
        target + " acknowledged writes (" + failed.get() + " operations failed: " + failures + ")",
        timeout,
        () -> writesAcknowledged.get() >= target);
  }

  /**
   * Stops issuing and waits until every operation in flight completed (each is bounded by its
   * client's operation timeout; {@code timeout} bounds the wait).
   */
  void stop(java.time.Duration timeout) throws InterruptedException {
    stop.set(true);
    long deadline = System.nanoTime() + timeout.toNanos();
    for (Thread thread : threads) {
      thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      if (thread.isAlive()) {
        throw new AssertionError(thread.getName() + " did not stop within " + timeout);
      }
    }
    for (Semaphore inFlight : permits) {
      long left = deadline - System.nanoTime();
      if (!inFlight.tryAcquire(depth, Math.max(0, left), TimeUnit.NANOSECONDS)) {
        throw new AssertionError(
            (depth - inFlight.availablePermits())
                + " operations still in flight "
                + timeout
                + " after the load stopped");
      }
    }
  }

  /**
   * Reads every recorded key once through {@code client} as client {@code clientId} (the final
   * reads the lost-write check uses); every read must succeed.
   */
  void finalReads(KvsClient client, int clientId) throws Exception {
    for (int key = 0; key < keys; key++) {
      byte[] bytes = TestKeys.key(prefix, key);
      recorder.get(clientId, bytes, () -> client.get(bytes));
    }
  }

  /**
   * Scans the whole key space through {@code client} and returns what is wrong with the fixed pairs
   * in it (empty: every fixed pair there with its value).
   */
  List<String> checkAllFixed(KvsClient client) {
    List<KeyValue> pairs = client.scan(new byte[0], new byte[0], fixed.size() + keys + 1);
    String wrong = compareScan(-1, pairs, fixed);
    return wrong == null ? List.of() : List.of(wrong + " (" + pairs.size() + " pairs)");
  }

  private void run(int clientId, Semaphore inFlight) {
    KvsClient client = clients.get(clientId);
    Random random = new Random(31L * clientId + 7);
    for (long sequence = 0; !stop.get(); sequence++) {
      try {
        if (!inFlight.tryAcquire(100, TimeUnit.MILLISECONDS)) {
          continue;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      // Without fixed pairs there is nothing for scans and multi-gets to check: the recorded
      // operations alone. With them, scans are a third of what is issued: their requests are the
      // long ones, which a region that goes away under them meets (issue 25, hole 4).
      int choice = random.nextInt(100);
      CompletableFuture<?> operation;
      if (fixed.isEmpty() ? choice < 45 : choice < 25) {
        operation = put(client, clientId, random.nextInt(keys), sequence);
      } else if (fixed.isEmpty() ? choice < 55 : choice < 30) {
        operation = delete(client, clientId, random.nextInt(keys));
      } else if (fixed.isEmpty() || choice < 55) {
        operation = get(client, clientId, random.nextInt(keys));
      } else if (choice < 90) {
        operation = scan(client, random.nextInt(SCAN_SLICES));
      } else {
        operation = multiGet(client, random);
      }
      operation.whenComplete((result, error) -> inFlight.release());
    }
  }

  private CompletableFuture<?> put(KvsClient client, int clientId, int key, long sequence) {
    byte[] bytes = TestKeys.key(prefix, key);
    byte[] value = RecordedLoad.value(clientId, sequence);
    Call call = recorder.invoke(clientId, Kind.PUT, bytes, value);
    return client
        .putAsync(bytes, value)
        .whenComplete((ignored, error) -> completeWrite(call, "put", error));
  }

  private CompletableFuture<?> delete(KvsClient client, int clientId, int key) {
    byte[] bytes = TestKeys.key(prefix, key);
    Call call = recorder.invoke(clientId, Kind.DELETE, bytes, null);
    return client
        .deleteAsync(bytes)
        .whenComplete((ignored, error) -> completeWrite(call, "delete", error));
  }

  private void completeWrite(Call call, String kind, Throwable error) {
    if (error == null) {
      call.ok();
      writesAcknowledged.incrementAndGet();
      return;
    }
    Throwable cause = unwrap(error);
    if (cause instanceof NotAppliedException) {
      call.failedNotApplied();
    } else {
      call.unknown();
    }
    failed(kind, cause);
  }

  private CompletableFuture<?> get(KvsClient client, int clientId, int key) {
    byte[] bytes = TestKeys.key(prefix, key);
    Call call = recorder.invoke(clientId, Kind.GET, bytes, null);
    return client
        .getAsync(bytes)
        .whenComplete(
            (value, error) -> {
              if (error == null) {
                call.okRead(value.orElse(null));
                readsAnswered.incrementAndGet();
              } else {
                call.unknown();
                failed("get", unwrap(error));
              }
            });
  }

  /** Scans slice {@code slice} of the key space and checks the fixed pairs in it. */
  /**
   * Scans the slice of the key space that holds {@code key} through {@code client} and checks the
   * fixed pairs in it, as the load's own scans (and counted with them): for a test that aims
   * requests at one region.
   */
  CompletableFuture<?> scanSliceOf(KvsClient client, byte[] key) {
    int prefix = (key.length > 0 ? (key[0] & 0xff) << 8 : 0) | (key.length > 1 ? key[1] & 0xff : 0);
    return scan(client, prefix * SCAN_SLICES / 65_536);
  }

  private CompletableFuture<?> scan(KvsClient client, int slice) {
    byte[] from = sliceStart(slice);
    byte[] to = slice + 1 == SCAN_SLICES ? new byte[0] : sliceStart(slice + 1);
    NavigableMap<byte[], byte[]> expected =
        to.length == 0 ? fixed.tailMap(from, true) : fixed.subMap(from, true, to, false);
    return client
        .scanAsync(from, to, SCAN_LIMIT)
        .whenComplete(
            (pairs, error) -> {
              if (!answered("scan", error)) {
                return;
              }
              String wrong = compareScan(slice, pairs, expected);
              if (wrong != null) {
                wrong(wrong + " (" + pairs.size() + " pairs; " + where(client, from) + ")");
              }
            });
  }

  private static String compareScan(
      int slice, List<KeyValue> pairs, NavigableMap<byte[], byte[]> expected) {
    if (pairs.size() >= SCAN_LIMIT && slice >= 0) {
      return "scan of slice " + slice + " reached its limit of " + SCAN_LIMIT + " pairs";
    }
    int found = 0;
    byte[] previous = null;
    for (KeyValue pair : pairs) {
      if (previous != null && Keys.compare(previous, pair.key()) >= 0) {
        return "scan of slice " + slice + " returned keys out of order";
      }
      previous = pair.key();
      byte[] value = expected.get(pair.key());
      if (value == null) {
        continue; // a key of the recorded load, whose value the history checks
      }
      if (!Arrays.equals(value, pair.value())) {
        return "scan of slice " + slice + " returned a wrong value of a fixed key";
      }
      found++;
    }
    if (found != expected.size()) {
      return "scan of slice "
          + slice
          + " returned "
          + found
          + " of the "
          + expected.size()
          + " fixed keys in it";
    }
    return null;
  }

  private CompletableFuture<?> multiGet(KvsClient client, Random random) {
    List<Map.Entry<byte[], byte[]>> entries = new ArrayList<>(MULTI_GET_KEYS);
    List<byte[]> wanted = new ArrayList<>(MULTI_GET_KEYS);
    byte[] start = new byte[] {(byte) random.nextInt(256), (byte) random.nextInt(256)};
    for (int i = 0; i < MULTI_GET_KEYS; i++) {
      Map.Entry<byte[], byte[]> entry = fixed.ceilingEntry(start);
      if (entry == null) {
        entry = fixed.firstEntry();
      }
      entries.add(entry);
      wanted.add(entry.getKey());
      start = Arrays.copyOf(entry.getKey(), entry.getKey().length + 1); // the next key after it
    }
    return client
        .multiGetAsync(wanted)
        .whenComplete(
            (values, error) -> {
              if (!answered("multi-get", error)) {
                return;
              }
              for (int i = 0; i < entries.size(); i++) {
                Optional<byte[]> got = values.get(i);
                if (got.isEmpty() || !Arrays.equals(got.get(), entries.get(i).getValue())) {
                  wrong(
                      "multi-get answered "
                          + (got.isEmpty() ? "no value" : "a wrong value")
                          + " for fixed key "
                          + io.kvs.core.cluster.Keys.print(entries.get(i).getKey())
                          + " ("
                          + where(client, entries.get(i).getKey())
                          + ")");
                  return;
                }
              }
            });
  }

  /** When, and the region holding {@code key} as {@code client}'s map has it now. */
  private String where(KvsClient client, byte[] key) {
    return String.format(
        "at %s, %.1f s into the load, region now %s",
        java.time.LocalTime.now(),
        (System.nanoTime() - started) / 1e9,
        client.regionMap().regionFor(key).map(Object::toString).orElse("none"));
  }

  /** The first key of slice {@code slice}: two leading bytes, as {@link TestKeys} spreads keys. */
  private static byte[] sliceStart(int slice) {
    int start = (int) ((long) slice * 65_536 / SCAN_SLICES);
    return new byte[] {(byte) (start >>> 8), (byte) start};
  }

  /** Counts a scan or multi-get that ended: whether it was answered (its answer to check). */
  private boolean answered(String kind, Throwable error) {
    if (error != null) {
      failed(kind, unwrap(error));
      return false;
    }
    scansAnswered.incrementAndGet();
    return true;
  }

  private void failed(String kind, Throwable cause) {
    failed.incrementAndGet();
    if (failures.size() < 20) {
      failures.add(kind + ": " + cause);
    }
  }

  private void wrong(String what) {
    if (wrongAnswers.size() < 20) {
      wrongAnswers.add(what);
    }
  }

  private static Throwable unwrap(Throwable error) {
    return error instanceof CompletionException && error.getCause() != null
        ? error.getCause()
        : error;
  }
}
