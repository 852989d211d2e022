package io.kvs.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.KeyValue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Put, get, delete, multi-get and scans against real servers, over both transports. */
class KvsClientOperationsTest extends ClusterTestBase {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  /** 260 keys "a0".."z9" (every region holds some), each its own value. */
  private static void putAlphabet(KvsClient client) {
    List<CompletableFuture<Void>> puts = new ArrayList<>();
    for (char c = 'a'; c <= 'z'; c++) {
      for (int i = 0; i < 10; i++) {
        String key = "" + c + i;
        puts.add(client.putAsync(bytes(key), bytes("value-" + key)));
      }
    }
    CompletableFuture.allOf(puts.toArray(CompletableFuture<?>[]::new)).join();
  }

  private static List<String> keys(List<KeyValue> pairs) {
    return pairs.stream().map(pair -> text(pair.key())).toList();
  }

  private static List<String> alphabetKeys(char from, int fromIndex, int count) {
    List<String> keys = new ArrayList<>();
    for (char c = from; c <= 'z' && keys.size() < count; c++) {
      for (int i = c == from ? fromIndex : 0; i < 10 && keys.size() < count; i++) {
        keys.add("" + c + i);
      }
    }
    return keys;
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void aCallAtTheInFlightBoundWaitsForAnOperationToComplete(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT, 2);
    List<CompletableFuture<Void>> puts = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      puts.add(client.putAsync(bytes("bounded" + i), bytes("v" + i)));
      // Two in flight at most: a call returns only once all but one of the earlier completed.
      long pending = puts.subList(0, i).stream().filter(put -> !put.isDone()).count();
      assertThat(pending).isLessThanOrEqualTo(1);
    }
    CompletableFuture.allOf(puts.toArray(CompletableFuture<?>[]::new)).join();
    assertThat(client.get(bytes("bounded99")))
        .hasValueSatisfying(v -> assertThat(text(v)).isEqualTo("v99"));
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void putGetAndDeleteReachTheRegionOfEachKey(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    assertThat(client.regionMap().size()).isEqualTo(4);

    for (String key : List.of("apple", "dog", "kiwi", "zebra")) {
      client.put(bytes(key), bytes("v-" + key));
    }
    assertThat(client.get(bytes("kiwi")))
        .hasValueSatisfying(v -> assertThat(text(v)).isEqualTo("v-kiwi"));
    assertThat(client.get(bytes("missing"))).isEmpty();
    // Each write went to its region's primary: a-c region 1 on s1, d-g region 2 on s2, ...
    assertThat(cluster.server("s1").region(1).get(bytes("apple"))).isEqualTo(bytes("v-apple"));
    assertThat(cluster.server("s2").region(2).get(bytes("dog"))).isEqualTo(bytes("v-dog"));
    assertThat(cluster.server("s1").region(3).get(bytes("kiwi"))).isEqualTo(bytes("v-kiwi"));
    assertThat(cluster.server("s2").region(4).get(bytes("zebra"))).isEqualTo(bytes("v-zebra"));

    client.delete(bytes("dog"));
    assertThat(client.get(bytes("dog"))).isEmpty();
    client.delete(bytes("never-written")); // deleting nothing succeeds

    // The asynchronous forms, many at once.
    List<CompletableFuture<Void>> puts = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      puts.add(client.putAsync(bytes(Character.toString('a' + i % 26) + i), bytes("async" + i)));
    }
    CompletableFuture.allOf(puts.toArray(CompletableFuture<?>[]::new)).get(10, TimeUnit.SECONDS);
    assertThat(client.getAsync(bytes("f5")).get(10, TimeUnit.SECONDS))
        .hasValueSatisfying(v -> assertThat(text(v)).isEqualTo("async5"));
    client.deleteAsync(bytes("f5")).get(10, TimeUnit.SECONDS);
    assertThat(client.getAsync(bytes("f5")).get(10, TimeUnit.SECONDS)).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void multiGetAnswersInTheOrderOfTheKeys(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    putAlphabet(client);

    List<byte[]> keys = new ArrayList<>();
    for (String key : List.of("z9", "a0", "nope", "k3", "e7", "a0", "q1", "")) {
      if (!key.isEmpty()) {
        keys.add(bytes(key));
      }
    }
    List<Optional<byte[]>> values = client.multiGet(keys);
    assertThat(values).hasSize(keys.size());
    List<String> texts =
        values.stream().map(v -> v.map(ClusterTestBase::text).orElse("-")).toList();
    assertThat(texts)
        .containsExactly(
            "value-z9", "value-a0", "-", "value-k3", "value-e7", "value-a0", "value-q1");
    assertThat(client.multiGet(List.of())).isEmpty();

    // More keys in one region than one request may carry (1,024): split and reassembled.
    List<CompletableFuture<Void>> puts = new ArrayList<>();
    List<byte[]> many = new ArrayList<>();
    for (int i = 0; i < 1500; i++) {
      byte[] key = bytes(String.format("m%04d", i));
      many.add(key);
      if (i % 3 != 0) {
        puts.add(client.putAsync(key, bytes("m" + i)));
      }
    }
    many.add(bytes("b1"));
    CompletableFuture.allOf(puts.toArray(CompletableFuture<?>[]::new)).get(20, TimeUnit.SECONDS);
    List<Optional<byte[]>> got = client.multiGetAsync(many).get(20, TimeUnit.SECONDS);
    for (int i = 0; i < 1500; i++) {
      if (i % 3 == 0) {
        assertThat(got.get(i)).as("m%04d", i).isEmpty();
      } else {
        assertThat(got.get(i).map(ClusterTestBase::text)).as("m%04d", i).hasValue("m" + i);
      }
    }
    assertThat(got.get(1500).map(ClusterTestBase::text)).hasValue("value-b1");
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void scansCrossRegionsInKeyOrder(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    putAlphabet(client);

    List<KeyValue> all = client.scan(new byte[0], new byte[0], 1000);
    assertThat(keys(all)).isEqualTo(alphabetKeys('a', 0, 260));
    assertThat(all.get(42)).isEqualTo(new KeyValue(bytes("e2"), bytes("value-e2")));

    // A limit below one region's content stops inside the region.
    assertThat(keys(client.scan(bytes("b5"), new byte[0], 7))).isEqualTo(alphabetKeys('b', 5, 7));
    // Crossing one boundary ("d"), and several ("h", "p"), with limits.
    assertThat(keys(client.scan(bytes("c7"), new byte[0], 12))).isEqualTo(alphabetKeys('c', 7, 12));
    assertThat(keys(client.scan(bytes("g5"), new byte[0], 100)))
        .isEqualTo(alphabetKeys('g', 5, 100));
    // A `to` bound inside a region, and one on a region boundary.
    assertThat(keys(client.scan(bytes("a"), bytes("e5"), 1000)))
        .isEqualTo(alphabetKeys('a', 0, 45));
    assertThat(keys(client.scan(bytes("c"), bytes("p"), 1000)))
        .isEqualTo(alphabetKeys('c', 0, 130));
    assertThat(keys(client.scanAsync(bytes("c"), bytes("q"), 1000).get(10, TimeUnit.SECONDS)))
        .isEqualTo(alphabetKeys('c', 0, 140));
    // The last region, and ranges holding nothing.
    assertThat(keys(client.scan(bytes("x"), new byte[0], 1000)))
        .isEqualTo(alphabetKeys('x', 0, 30));
    assertThat(client.scan(bytes("q"), bytes("q"), 10)).isEmpty();
    assertThat(client.scan(bytes("q"), bytes("b"), 10)).isEmpty();
    assertThat(client.scan(bytes("zz"), new byte[0], 10)).isEmpty();
    assertThat(client.scan(bytes("d55"), bytes("d6"), 10)).isEmpty();
  }

  /**
   * A scan stream reads page by page across regions: every pair once, in key order, whatever the
   * page size; a key deleted where a page ends is not needed to go on; bounds and close hold.
   */
  @ParameterizedTest
  @EnumSource(Transport.class)
  void scanStreamsPageAcrossRegionsAndReturnEachPairOnce(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    putAlphabet(client);
    for (int pageSize : new int[] {1, 7, 26, 9_999}) {
      List<byte[]> streamed = new ArrayList<>();
      try (ScanStream stream = client.scanStream(new byte[0], new byte[0], pageSize)) {
        stream.forEachRemaining(pair -> streamed.add(pair.key()));
      }
      assertThat(streamed.stream().map(ClusterTestBase::text).toList())
          .as("page size %d", pageSize)
          .isEqualTo(alphabetKeys('a', 0, 260));
    }
    // Bounded, from inside one region to inside another.
    List<String> bounded = new ArrayList<>();
    client
        .scanStream(bytes("c7"), bytes("g5"), 10)
        .forEachRemaining(pair -> bounded.add(text(pair.key())));
    assertThat(bounded).isEqualTo(alphabetKeys('c', 7, 38));
    // The key a page ended at is deleted before the next page: the stream goes on after it.
    ScanStream stream = client.scanStream(bytes("a"), new byte[0], 5);
    List<String> seen = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      seen.add(text(stream.next().key()));
    }
    client.delete(bytes(seen.get(4)));
    stream.forEachRemaining(pair -> seen.add(text(pair.key())));
    assertThat(seen).isEqualTo(alphabetKeys('a', 0, 260));
    // Closed: nothing more.
    ScanStream closed = client.scanStream(new byte[0], new byte[0], 3);
    closed.next();
    closed.close();
    assertThat(closed.hasNext()).isFalse();
    assertThatThrownBy(() -> client.scanStream(new byte[0], new byte[0], 10_000))
        .isInstanceOf(io.kvs.core.InvalidRequestException.class);
  }

  /**
   * Reverse scans read down across regions: every pair once, in descending key order, with bounds
   * inside regions and on their boundaries, limits, and streams of any page size.
   */
  @ParameterizedTest
  @EnumSource(Transport.class)
  void reverseScansAndStreamsCrossRegionsInDescendingOrder(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    putAlphabet(client);
    List<String> all = alphabetKeys('a', 0, 260);
    assertThat(keys(client.reverseScan(new byte[0], new byte[0], 1000))).isEqualTo(reversed(all));
    // From inside one region down to inside another; ends on a boundary ("h") and inside one.
    assertThat(keys(client.reverseScan(bytes("c7"), bytes("g5"), 1000)))
        .isEqualTo(reversed(alphabetKeys('c', 7, 38)));
    assertThat(keys(client.reverseScan(bytes("c"), bytes("h"), 1000)))
        .isEqualTo(reversed(alphabetKeys('c', 0, 50)));
    // A limit that stops across a boundary.
    assertThat(keys(client.reverseScan(new byte[0], bytes("h3"), 12)))
        .isEqualTo(List.of("h2", "h1", "h0", "g9", "g8", "g7", "g6", "g5", "g4", "g3", "g2", "g1"));
    assertThat(keys(client.reverseScanAsync(bytes("x"), new byte[0], 5).get(10, TimeUnit.SECONDS)))
        .isEqualTo(List.of("z9", "z8", "z7", "z6", "z5"));
    assertThat(client.reverseScan(bytes("q"), bytes("q"), 10)).isEmpty();
    assertThat(client.reverseScan(bytes("d55"), bytes("d6"), 10)).isEmpty();
    assertThat(client.reverseScan(new byte[0], bytes("a0"), 10)).isEmpty();
    for (int pageSize : new int[] {1, 7, 26, 9_999}) {
      List<String> streamed = new ArrayList<>();
      try (ScanStream stream = client.reverseScanStream(new byte[0], new byte[0], pageSize)) {
        stream.forEachRemaining(pair -> streamed.add(text(pair.key())));
      }
      assertThat(streamed).as("page size %d", pageSize).isEqualTo(reversed(all));
    }
    List<String> bounded = new ArrayList<>();
    client
        .reverseScanStream(bytes("c7"), bytes("g5"), 10)
        .forEachRemaining(pair -> bounded.add(text(pair.key())));
    assertThat(bounded).isEqualTo(reversed(alphabetKeys('c', 7, 38)));
  }

  private static List<String> reversed(List<String> keys) {
    List<String> copy = new ArrayList<>(keys);
    java.util.Collections.reverse(copy);
    return copy;
  }

  /**
   * An atomic batch of one region's keys applies all of its writes (small and large values, a
   * delete); one whose keys lie in two regions, or that is too large, writes nothing.
   */
  @ParameterizedTest
  @EnumSource(Transport.class)
  void anAtomicBatchAppliesAllOfItsWritesOrNone(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    client.put(bytes("e3"), bytes("to be deleted"));
    byte[] large = new byte[5000];
    Arrays.fill(large, (byte) 'L');
    client.writeAtomically(
        List.of(
            Mutation.put(bytes("e1"), bytes("one")),
            Mutation.put(bytes("e2"), large),
            Mutation.delete(bytes("e3")),
            Mutation.put(bytes("e1"), bytes("one, again"))));
    assertThat(client.get(bytes("e1")))
        .hasValueSatisfying(v -> assertThat(text(v)).isEqualTo("one, again"));
    assertThat(client.get(bytes("e2"))).hasValueSatisfying(v -> assertThat(v).isEqualTo(large));
    assertThat(client.get(bytes("e3"))).isEmpty();
    // "a1" and "z1" lie in different regions.
    assertThatThrownBy(
            () ->
                client.writeAtomically(
                    List.of(
                        Mutation.put(bytes("a1"), bytes("x")),
                        Mutation.put(bytes("z1"), bytes("y")))))
        .isInstanceOf(NotAppliedException.class)
        .hasMessageContaining("more than one region");
    assertThat(client.get(bytes("a1"))).isEmpty();
    assertThat(client.get(bytes("z1"))).isEmpty();
    List<Mutation> tooMany = new ArrayList<>();
    for (int i = 0; i <= io.kvs.core.wire.WireCodec.BATCH_WRITES_MAX; i++) {
      tooMany.add(Mutation.put(bytes("e" + i), bytes("v")));
    }
    assertThatThrownBy(() -> client.writeAtomically(tooMany))
        .isInstanceOf(io.kvs.core.InvalidRequestException.class)
        .hasMessageContaining("exceeds");
    assertThat(client.get(bytes("e100"))).isEmpty();
    assertThat(
            client
                .writeAtomicallyAsync(List.of(Mutation.delete(bytes("e1"))))
                .get(10, TimeUnit.SECONDS))
        .isNull();
    assertThat(client.get(bytes("e1"))).isEmpty();
  }

  /**
   * Writes across regions go as one atomic batch per region (several when a region's share is
   * larger than one holds), and each write's outcome is reported.
   */
  @ParameterizedTest
  @EnumSource(Transport.class)
  void writesAcrossRegionsReportEachOutcome(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    List<KeyValue> pairs = new ArrayList<>();
    for (String key : alphabetKeys('a', 0, 260)) {
      pairs.add(new KeyValue(bytes(key), bytes("batched-" + key)));
    }
    // 2,500 keys of one region: three batches of it.
    for (int i = 0; i < 2500; i++) {
      pairs.add(new KeyValue(bytes(String.format("k%05d", i)), bytes("many-" + i)));
    }
    BatchResult put = client.putAll(pairs);
    assertThat(put.size()).isEqualTo(pairs.size());
    assertThat(put.allApplied()).as("%s", put).isTrue();
    assertThat(put.error(0)).isEmpty();
    assertThat(keys(client.scan(new byte[0], new byte[0], 10_000))).hasSize(pairs.size());
    assertThat(client.get(bytes("k02499")))
        .hasValueSatisfying(v -> assertThat(text(v)).isEqualTo("many-2499"));
    List<byte[]> gone = new ArrayList<>();
    for (String key : alphabetKeys('a', 0, 260)) {
      gone.add(bytes(key));
    }
    BatchResult deleted = client.deleteAllAsync(gone).get(30, TimeUnit.SECONDS);
    assertThat(deleted.count(BatchResult.Outcome.APPLIED)).isEqualTo(260);
    assertThat(client.scan(new byte[0], bytes("k"), 10)).isEmpty();
    assertThat(client.writeAll(List.of()).size()).isZero();
  }

  /** A region holding more than one reply's worth (4 MiB) is read in pages. */
  @ParameterizedTest
  @EnumSource(Transport.class)
  void scansPageThroughLargeValues(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    List<CompletableFuture<Void>> puts = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      byte[] value = new byte[512 << 10];
      Arrays.fill(value, (byte) i);
      puts.add(client.putAsync(bytes(String.format("e%02d", i)), value));
    }
    puts.add(client.putAsync(bytes("h0"), bytes("next region")));
    CompletableFuture.allOf(puts.toArray(CompletableFuture<?>[]::new)).get(30, TimeUnit.SECONDS);

    List<KeyValue> pairs = client.scan(bytes("e"), bytes("i"), 100);
    assertThat(pairs).hasSize(13);
    for (int i = 0; i < 12; i++) {
      assertThat(text(pairs.get(i).key())).isEqualTo(String.format("e%02d", i));
      assertThat(pairs.get(i).value()).hasSize(512 << 10).containsOnly((byte) i);
    }
    assertThat(text(pairs.get(12).value())).isEqualTo("next region");
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void threadsShareOneConnectionPerServer(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    ExecutorService threads = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int thread = t;
        done.add(
            threads.submit(
                () -> {
                  for (int i = 0; i < 200; i++) {
                    byte[] key =
                        bytes((char) ('a' + (i * 7 + thread) % 26) + "-" + thread + "-" + i);
                    client.put(key, key);
                    assertThat(client.get(key)).hasValue(key);
                  }
                  return null;
                }));
      }
      for (Future<?> future : done) {
        future.get(30, TimeUnit.SECONDS);
      }
    } finally {
      threads.shutdownNow();
    }
    assertThat(client.openConnections()).isEqualTo(2); // s1 and s2; s3 holds nothing
    assertThat(client.scan(new byte[0], new byte[0], 10_000)).hasSize(800);
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void blockingCallsCompleteWhileApplicationCallbacksHoldTheCallbackThreads(Transport transport)
      throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    client.put(bytes("kiwi"), bytes("v"));
    // An application's callbacks on async results run on the client's callback threads; these
    // block every one of them (the pool has at least two, at most one per core).
    int pool = Math.max(2, Runtime.getRuntime().availableProcessors());
    CountDownLatch release = new CountDownLatch(1);
    Semaphore entered = new Semaphore(0);
    List<CompletableFuture<Void>> held = new ArrayList<>();
    ExecutorService caller = Executors.newSingleThreadExecutor();
    Thread test = Thread.currentThread();
    try {
      // A callback chained on a future that already completed runs at once on the thread that
      // chains it, this one: such a callback must not block it (the test would hang), so it
      // returns, and more reads are issued until the pool's threads are all held.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      int blocked = 0;
      while (blocked < pool) {
        assertThat(System.nanoTime() - deadline).isNegative();
        held.add(
            client
                .getAsync(bytes("kiwi"))
                .thenAccept(
                    value -> {
                      if (Thread.currentThread() == test) {
                        return;
                      }
                      entered.release();
                      try {
                        release.await();
                      } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                      }
                    }));
        if (entered.tryAcquire(50, TimeUnit.MILLISECONDS)) {
          blocked++;
        }
      }
      // A blocking call's result is completed where its reply arrives, not on those threads.
      Future<Optional<byte[]>> read =
          caller.submit(
              () -> {
                client.put(bytes("dog"), bytes("w"));
                return client.get(bytes("dog"));
              });
      assertThat(read.get(5, TimeUnit.SECONDS))
          .hasValueSatisfying(v -> assertThat(text(v)).isEqualTo("w"));
    } finally {
      release.countDown();
      caller.shutdownNow();
    }
    CompletableFuture.allOf(held.toArray(CompletableFuture<?>[]::new)).get(10, TimeUnit.SECONDS);
  }
}
