package io.kvs.client;

import io.kvs.core.ClosedException;
import io.kvs.core.InvalidRequestException;
import io.kvs.core.KeyValue;
import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.security.ZooKeeperAcls;
import io.kvs.core.wire.WireCodec;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;

/**
 * A client of a KVS cluster: reads and writes keys, routed by the cluster's region map, over the
 * {@linkplain Transport transport} chosen. Create one with {@link #builder()}, share it between
 * threads (it is thread-safe and pipelines requests over one connection per server), and close it
 * when done.
 *
 * <p><b>Routing and retries.</b> The region map (every region's key range, primary and epoch) is
 * read from ZooKeeper and kept current by a Curator cache. Each request goes to the primary of the
 * region holding its key and carries the region's epoch. When a server answers NOT_PRIMARY,
 * WRONG_REGION, STALE_EPOCH or CLOSED, the client re-reads the region from ZooKeeper and retries as
 * soon as its map changes; when a server is overloaded or unreachable, or a region has no primary,
 * it retries with exponential backoff (5 ms doubling to 500 ms; at most 25 ms apart for a region
 * being opened). An operation that gets no further within the {@linkplain
 * KvsClientBuilder#operationTimeout operation timeout} fails with a {@link
 * RegionUnavailableException} naming the region and the last reason. No retry is started with less
 * than a quarter of the timeout (at most 200 ms) left: a write retried with a sliver of time would
 * end with its outcome unknown although every answer so far refused it.
 *
 * <p><b>Writes that fail.</b> A put or delete is retried only while no attempt can have taken
 * effect (no primary reached, or every answer a refusal such as NOT_PRIMARY). Once it may have
 * reached a primary -- sent and then the connection broke, no reply within the operation timeout,
 * or an error the primary may have met after applying it, such as IO_ERROR when replication failed
 * -- it fails at once with an {@link OutcomeUnknownException}: retrying could apply it twice, the
 * second time after a later write of the same key. A conditional write (compare-and-set, increment)
 * is the exception: it carries a write id (this client's random id and a sequence number), which
 * every replica keeps with the write, and is sent again under it; the region answers a retry of a
 * write it applied as it answered the first attempt, so it applies at most once, also across a
 * failover. Only when the region cannot tell (the first attempt may have been applied before what
 * it remembers: it was compacted away before a failover, or forgotten past the region's 65,536 most
 * recent ids) does it fail with {@link OutcomeUnknownException}. Any other failed write, {@link
 * NotAppliedException} (and {@link RegionUnavailableException}, one kind of it) or {@link
 * InvalidRequestException}, surely did not take effect.
 *
 * <p><b>Errors.</b> Every failure is a {@link KvsException} carrying a {@link StatusCode}: keys and
 * values beyond the protocol's limits (key 1 to 4,096 bytes, value up to 1 MiB) fail with an {@link
 * InvalidRequestException} before anything is sent; an error status from a server fails with the
 * exception {@link KvsException#of} picks for it; any operation on a closed client fails with a
 * {@link ClosedException}. The asynchronous methods report errors through their futures; the
 * blocking ones throw them. Null arguments throw {@link NullPointerException} at once.
 *
 * <p><b>Asynchronous use.</b> Futures complete on the client's own threads; actions that block
 * should be chained with the {@code *Async} variants of {@link CompletableFuture}. Byte arrays
 * passed in are not copied: do not change them until the operation completes. (A blocking call
 * hands no future out, so its result is completed where the reply arrives, waking only the caller;
 * an application's callbacks never run there.)
 */
public final class KvsClient implements AutoCloseable {
  private final CuratorFramework curator;
  private final MetadataCache metadata;
  private final ConnectionFactory factory;
  private final ClientContext context;
  private final ExecutorService blocking;
  private final ForkJoinPool callbacks;
  private final ScheduledThreadPoolExecutor timer;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final int maxInFlight;
  private final Semaphore inFlight;

  private KvsClient(
      CuratorFramework curator,
      MetadataCache metadata,
      ConnectionFactory factory,
      ClientContext context,
      ExecutorService blocking,
      ForkJoinPool callbacks,
      ScheduledThreadPoolExecutor timer,
      int maxInFlight) {
    this.maxInFlight = maxInFlight;
    this.inFlight = new Semaphore(maxInFlight);
    this.curator = curator;
    this.metadata = metadata;
    this.factory = factory;
    this.context = context;
    this.blocking = blocking;
    this.callbacks = callbacks;
    this.timer = timer;
  }

  /**
   * A builder for a client; {@link KvsClientBuilder#zookeeper} is required.
   *
   * @return a builder with the defaults
   */
  public static KvsClientBuilder builder() {
    return new KvsClientBuilder();
  }

  static KvsClient open(
      String zookeeper,
      String cluster,
      Transport transport,
      Duration timeout,
      Duration connectTimeout,
      int maxInFlight,
      ClientSecurity security,
      ClientMetrics clientMetrics) {
    ClusterPaths paths = new ClusterPaths(cluster);
    ExecutorService blocking = Executors.newCachedThreadPool(daemonThreads("kvs-client-blocking"));
    ForkJoinPool callbacks =
        new ForkJoinPool(
            Math.max(2, Runtime.getRuntime().availableProcessors()),
            pool -> {
              ForkJoinWorkerThread thread =
                  ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
              thread.setName("kvs-client-callbacks-" + thread.getPoolIndex());
              thread.setDaemon(true);
              return thread;
            },
            null,
            true);
    ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(1, daemonThreads("kvs-client-timer"));
    timer.setRemoveOnCancelPolicy(true);
    ConnectionFactory factory = null;
    CuratorFramework curator = null;
    MetadataCache metadata = null;
    try {
      factory = ConnectionFactory.create(transport, blocking, security);
      long deadline = System.nanoTime() + connectTimeout.toNanos();
      curator =
          ZooKeeperAcls.apply(
                  CuratorFrameworkFactory.builder()
                      .connectString(zookeeper)
                      .sessionTimeoutMs(30_000)
                      .connectionTimeoutMs((int) Math.min(connectTimeout.toMillis(), 15_000))
                      .retryPolicy(new BoundedExponentialBackoffRetry(50, 1000, 29)),
                  security.options().zookeeper())
              .build();
      curator.start();
      if (!curator.blockUntilConnected(
          (int) Math.max(1, connectTimeout.toMillis()), TimeUnit.MILLISECONDS)) {
        throw new KvsException(
            StatusCode.IO_ERROR,
            "cannot connect to ZooKeeper at "
                + zookeeper
                + " within "
                + Problem.format(connectTimeout));
      }
      metadata = new MetadataCache(curator, paths);
      metadata.start(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
      Connections connections = new Connections(factory, blocking);
      ClientContext context =
          new ClientContext(metadata, connections, callbacks, timer, timeout, clientMetrics);
      return new KvsClient(
          curator, metadata, factory, context, blocking, callbacks, timer, maxInFlight);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      shutDown(metadata, curator, factory, blocking, callbacks, timer);
      throw new KvsException(StatusCode.IO_ERROR, "interrupted while connecting to ZooKeeper", e);
    } catch (RuntimeException | Error e) {
      shutDown(metadata, curator, factory, blocking, callbacks, timer);
      throw e;
    }
  }

  private static ThreadFactory daemonThreads(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return task -> {
      Thread thread = new Thread(task, prefix + "-" + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }

  // --- Asynchronous operations ---------------------------------------------------------------

  /**
   * Stores {@code value} under {@code key}, replacing any earlier value.
   *
   * @param key 1 to 4,096 bytes
   * @param value up to 1 MiB
   * @return completes when the region's primary has acknowledged the write
   */
  public CompletableFuture<Void> putAsync(byte[] key, byte[] value) {
    return put(key, value, false);
  }

  private CompletableFuture<Void> put(byte[] key, byte[] value, boolean awaited) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(value, "value");
    try {
      Checks.key(key, "key");
      Checks.value(value);
    } catch (KvsException e) {
      return CompletableFuture.failedFuture(e);
    }
    return ifOpen(() -> KeyOperation.put(context, key, value, awaited));
  }

  /**
   * Reads the value of {@code key}.
   *
   * @param key 1 to 4,096 bytes
   * @return the value, or empty if the key has none
   */
  public CompletableFuture<Optional<byte[]>> getAsync(byte[] key) {
    return get(key, false);
  }

  private CompletableFuture<Optional<byte[]>> get(byte[] key, boolean awaited) {
    Objects.requireNonNull(key, "key");
    try {
      Checks.key(key, "key");
    } catch (KvsException e) {
      return CompletableFuture.failedFuture(e);
    }
    return ifOpen(() -> KeyOperation.get(context, key, awaited));
  }

  /**
   * Deletes {@code key}'s value; deleting a key without a value succeeds.
   *
   * @param key 1 to 4,096 bytes
   * @return completes when the region's primary has acknowledged the delete
   */
  public CompletableFuture<Void> deleteAsync(byte[] key) {
    return delete(key, false);
  }

  private CompletableFuture<Void> delete(byte[] key, boolean awaited) {
    Objects.requireNonNull(key, "key");
    try {
      Checks.key(key, "key");
    } catch (KvsException e) {
      return CompletableFuture.failedFuture(e);
    }
    return ifOpen(() -> KeyOperation.delete(context, key, awaited));
  }

  /**
   * Stores {@code value} under {@code key} if the key holds {@code expected} (null: holds no
   * value), atomically: the region's primary decides and writes in the region's write order, and
   * the write is replicated and acknowledged as a put is. A failure that leaves its outcome unknown
   * sends it again under its write id, which the region applies at most once (see the class
   * comment); {@link OutcomeUnknownException} only when the region cannot tell whether the first
   * attempt applied.
   *
   * @param key 1 to 4,096 bytes
   * @param expected the value the key must hold, up to 1 MiB; null: it must hold none
   * @param value up to 1 MiB
   * @return applied, or not and the key's value then
   */
  public CompletableFuture<CasResult> compareAndSetAsync(
      byte[] key, byte[] expected, byte[] value) {
    Objects.requireNonNull(value, "value");
    return conditional(key, expected, value, false);
  }

  /** {@link #compareAndSetAsync} expecting no value: stores {@code value} only if there is none. */
  public CompletableFuture<CasResult> putIfAbsentAsync(byte[] key, byte[] value) {
    Objects.requireNonNull(value, "value");
    return conditional(key, null, value, false);
  }

  /**
   * Deletes {@code key}'s value if it is {@code expected}, atomically (as {@link
   * #compareAndSetAsync}).
   *
   * @param key 1 to 4,096 bytes
   * @param expected the value the key must hold, up to 1 MiB
   * @return applied, or not and the key's value then
   */
  public CompletableFuture<CasResult> deleteIfEqualsAsync(byte[] key, byte[] expected) {
    Objects.requireNonNull(expected, "expected");
    return conditional(key, expected, null, false);
  }

  private CompletableFuture<CasResult> conditional(
      byte[] key, byte[] expected, byte[] value, boolean awaited) {
    Objects.requireNonNull(key, "key");
    try {
      Checks.key(key, "key");
      if (expected != null) {
        Checks.value(expected);
      }
      if (value != null) {
        Checks.value(value);
      }
    } catch (KvsException e) {
      return CompletableFuture.failedFuture(e);
    }
    return ifOpen(() -> KeyOperation.compareAndSet(context, key, expected, value, awaited));
  }

  /**
   * Adds {@code delta} to the 8-byte signed counter under {@code key} (a key without a value counts
   * as 0; the counter is stored little-endian), atomically, as {@link #compareAndSetAsync} writes.
   * A key holding anything but 8 bytes, or a sum past 64 bits, fails with INVALID_ARGUMENT and
   * writes nothing.
   *
   * @param key 1 to 4,096 bytes
   * @return the counter's value after the addition
   */
  public CompletableFuture<Long> incrementAsync(byte[] key, long delta) {
    return increment(key, delta, false);
  }

  private CompletableFuture<Long> increment(byte[] key, long delta, boolean awaited) {
    Objects.requireNonNull(key, "key");
    try {
      Checks.key(key, "key");
    } catch (KvsException e) {
      return CompletableFuture.failedFuture(e);
    }
    return ifOpen(() -> KeyOperation.increment(context, key, delta, awaited));
  }

  /**
   * Reads the values of many keys: they are grouped by region and each region is asked once (in
   * requests of up to 1,024 keys), all regions at once.
   *
   * @param keys each 1 to 4,096 bytes; duplicates allowed
   * @return one entry per key, in the order of {@code keys}: the value, or empty if it has none
   */
  public CompletableFuture<List<Optional<byte[]>>> multiGetAsync(List<byte[]> keys) {
    List<byte[]> copy = List.copyOf(Objects.requireNonNull(keys, "keys"));
    try {
      for (byte[] key : copy) {
        Checks.key(key, "multi-get key");
      }
    } catch (KvsException e) {
      return CompletableFuture.failedFuture(e);
    }
    if (copy.isEmpty()) {
      return ifOpen(() -> CompletableFuture.completedFuture(List.of()));
    }
    return ifOpen(() -> MultiGetOperation.start(context, copy));
  }

  /**
   * Applies {@code mutations} atomically: all of them or none, in order (a later write of a key
   * wins), on every replica, as one write of the region -- a scan sees all or none of them, and a
   * failover keeps all or none. Their keys must lie in one region (design keys that change together
   * to share a prefix the regions are not split inside); keys that lie in more than one fail it
   * with a {@link NotAppliedException} (INVALID_ARGUMENT), nothing written. Retried as a put is:
   * never sent again once it may have reached a primary ({@link OutcomeUnknownException}).
   *
   * @param mutations 1 to 1,024 writes, of at most 1 MiB + 4 KiB of keys and values together
   * @return completes when the region's primary has acknowledged them
   */
  public CompletableFuture<Void> writeAtomicallyAsync(List<Mutation> mutations) {
    return writeAtomically(mutations, false);
  }

  private CompletableFuture<Void> writeAtomically(List<Mutation> mutations, boolean awaited) {
    List<Mutation> copy = List.copyOf(Objects.requireNonNull(mutations, "mutations"));
    try {
      checkMutations(copy);
      if (copy.isEmpty()) {
        throw new InvalidRequestException(StatusCode.INVALID_ARGUMENT, "an empty atomic batch");
      }
      long bytes = copy.stream().mapToLong(BatchWrites::bytes).sum();
      if (!BatchWrites.fits(copy.size(), bytes)) {
        throw new InvalidRequestException(
            StatusCode.TOO_LARGE,
            "an atomic batch of "
                + copy.size()
                + " writes and "
                + bytes
                + " key and value bytes exceeds the limit of "
                + WireCodec.BATCH_WRITES_MAX
                + " writes and "
                + WireCodec.BATCH_BYTES_MAX
                + " bytes");
      }
    } catch (KvsException e) {
      return CompletableFuture.failedFuture(e);
    }
    return ifOpen(() -> BatchOperation.start(context, copy, awaited));
  }

  /**
   * Applies many writes across regions: grouped by region, each region's writes sent as atomic
   * batches (up to 1,024 writes and 1 MiB + 4 KiB each), every region at once. Each write's outcome
   * is reported by its index: applied, not applied, or unknown; writes of one batch share theirs.
   * Writes of one key are applied in their order only if they fall in one batch: give a key once.
   *
   * @param mutations the writes; each key 1 to 4,096 bytes, each value up to 1 MiB
   * @return every write's outcome, once every batch has one
   */
  public CompletableFuture<BatchResult> writeAllAsync(List<Mutation> mutations) {
    List<Mutation> copy = List.copyOf(Objects.requireNonNull(mutations, "mutations"));
    try {
      checkMutations(copy);
    } catch (KvsException e) {
      return CompletableFuture.failedFuture(e);
    }
    if (copy.isEmpty()) {
      return ifOpen(
          () ->
              CompletableFuture.completedFuture(
                  new BatchResult(new BatchResult.Outcome[0], new KvsException[0])));
    }
    return ifOpen(() -> BatchWrites.start(context, copy));
  }

  /** {@link #writeAllAsync} of puts: stores each pair's value under its key. */
  public CompletableFuture<BatchResult> putAllAsync(List<KeyValue> pairs) {
    return writeAllAsync(
        Objects.requireNonNull(pairs, "pairs").stream()
            .map(pair -> Mutation.put(pair.key(), pair.value()))
            .toList());
  }

  /** {@link #writeAllAsync} of deletes: deletes each key's value. */
  public CompletableFuture<BatchResult> deleteAllAsync(List<byte[]> keys) {
    return writeAllAsync(
        Objects.requireNonNull(keys, "keys").stream().map(Mutation::delete).toList());
  }

  private static void checkMutations(List<Mutation> mutations) {
    for (Mutation mutation : mutations) {
      Objects.requireNonNull(mutation, "mutation");
      Checks.key(mutation.key(), "batch key");
      if (!mutation.isDelete()) {
        Checks.value(mutation.value());
      }
    }
  }

  /**
   * Reads the pairs with keys in {@code [from, to)}, in key order, at most {@code limit} of them.
   * The scan continues across regions until it has {@code limit} pairs or reaches {@code to}. It is
   * not a snapshot: each region (and each page of at most 4 MiB within one) is read at its own
   * moment.
   *
   * @param from the first key (inclusive); empty: from the first key of all
   * @param to the end (exclusive); empty: to the last key of all
   * @param limit the most pairs to return, at least 1
   * @return the pairs, in key order
   */
  public CompletableFuture<List<KeyValue>> scanAsync(byte[] from, byte[] to, int limit) {
    return scan(from, to, limit, false);
  }

  private CompletableFuture<List<KeyValue>> scan(
      byte[] from, byte[] to, int limit, boolean reverse) {
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    try {
      Checks.bound(from, "scan start");
      Checks.bound(to, "scan end");
      Checks.limit(limit);
    } catch (KvsException e) {
      return CompletableFuture.failedFuture(e);
    }
    if (to.length > 0 && Keys.compare(from, to) >= 0) {
      return ifOpen(() -> CompletableFuture.completedFuture(List.of()));
    }
    return ifOpen(
        () ->
            reverse
                ? ScanOperation.startReverse(context, from, to, limit)
                : ScanOperation.start(context, from, to, limit));
  }

  /**
   * Reads the pairs with keys in {@code [from, to)} in descending key order, from the last key
   * below {@code to} down, at most {@code limit} of them, across regions as {@link #scanAsync}
   * does.
   *
   * @param from the lowest key (inclusive); empty: down to the first key of all
   * @param to the end (exclusive); empty: from the last key of all
   * @param limit the most pairs to return, at least 1
   * @return the pairs, in descending key order
   */
  public CompletableFuture<List<KeyValue>> reverseScanAsync(byte[] from, byte[] to, int limit) {
    return scan(from, to, limit, true);
  }

  /**
   * Starts an operation once one of the {@code maxInFlight} permits is free: the caller waits for
   * one (backpressure) up to the operation timeout, then gets a {@link NotAppliedException} (the
   * operation was never sent).
   */
  private <T> CompletableFuture<T> ifOpen(Supplier<CompletableFuture<T>> start) {
    if (context.isClosed()) {
      return CompletableFuture.failedFuture(ClientContext.closedError());
    }
    try {
      if (!inFlight.tryAcquire(context.operationTimeout.toNanos(), TimeUnit.NANOSECONDS)) {
        return CompletableFuture.failedFuture(
            new NotAppliedException(
                StatusCode.OVERLOADED,
                "the client has "
                    + maxInFlight
                    + " operations in flight (maxInFlight) and none completed within "
                    + Problem.format(context.operationTimeout)
                    + "; the operation was not sent"));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return CompletableFuture.failedFuture(
          new NotAppliedException(
              StatusCode.IO_ERROR,
              "interrupted while waiting to send; the operation was not sent"));
    }
    CompletableFuture<T> started;
    try {
      started = start.get();
    } catch (RuntimeException | Error e) {
      inFlight.release();
      throw e;
    }
    started.whenComplete((result, failure) -> inFlight.release());
    return started;
  }

  // --- Blocking operations -------------------------------------------------------------------

  /**
   * Stores {@code value} under {@code key}; blocks until acknowledged. See {@link #putAsync}.
   *
   * @param key 1 to 4,096 bytes
   * @param value up to 1 MiB
   * @throws KvsException why it failed
   */
  public void put(byte[] key, byte[] value) {
    await(put(key, value, true));
  }

  /**
   * Reads the value of {@code key}; blocks. See {@link #getAsync}.
   *
   * @param key 1 to 4,096 bytes
   * @return the value, or empty if the key has none
   * @throws KvsException why it failed
   */
  public Optional<byte[]> get(byte[] key) {
    return await(get(key, true));
  }

  /**
   * Deletes {@code key}'s value; blocks until acknowledged. See {@link #deleteAsync}.
   *
   * @param key 1 to 4,096 bytes
   * @throws KvsException why it failed
   */
  public void delete(byte[] key) {
    await(delete(key, true));
  }

  /**
   * Stores {@code value} if {@code key} holds {@code expected} (null: none); blocks. See {@link
   * #compareAndSetAsync}.
   *
   * @throws OutcomeUnknownException if it may or may not have been applied
   * @throws KvsException why else it failed
   */
  public CasResult compareAndSet(byte[] key, byte[] expected, byte[] value) {
    Objects.requireNonNull(value, "value");
    return await(conditional(key, expected, value, true));
  }

  /** Stores {@code value} if {@code key} has none; blocks. See {@link #putIfAbsentAsync}. */
  public CasResult putIfAbsent(byte[] key, byte[] value) {
    Objects.requireNonNull(value, "value");
    return await(conditional(key, null, value, true));
  }

  /** Deletes {@code key} if it holds {@code expected}; blocks. See {@link #deleteIfEqualsAsync}. */
  public CasResult deleteIfEquals(byte[] key, byte[] expected) {
    Objects.requireNonNull(expected, "expected");
    return await(conditional(key, expected, null, true));
  }

  /**
   * Adds {@code delta} to the counter under {@code key}; blocks. See {@link #incrementAsync}.
   *
   * @return the counter's value after the addition
   */
  public long increment(byte[] key, long delta) {
    return await(increment(key, delta, true));
  }

  /**
   * Reads the values of many keys; blocks. See {@link #multiGetAsync}.
   *
   * @param keys each 1 to 4,096 bytes
   * @return one entry per key, in the order of {@code keys}
   * @throws KvsException why it failed
   */
  public List<Optional<byte[]>> multiGet(List<byte[]> keys) {
    return await(multiGetAsync(keys));
  }

  /** The pairs a {@link ScanStream} page holds at most unless told otherwise. */
  public static final int SCAN_STREAM_PAGE = 1_000;

  /**
   * Streams the pairs with keys in {@code [from, to)}, in key order, page by page as they are
   * consumed ({@value #SCAN_STREAM_PAGE} pairs a page). See {@link ScanStream}.
   *
   * @param from the first key (inclusive); empty: from the first key of all
   * @param to the end (exclusive); empty: to the last key of all
   */
  public ScanStream scanStream(byte[] from, byte[] to) {
    return scanStream(from, to, SCAN_STREAM_PAGE);
  }

  /**
   * Streams the pairs with keys in {@code [from, to)}, in key order, at most {@code pageSize} read
   * at a time (and one page ahead). A pair present for the stream's whole duration is returned
   * exactly once, across region moves, splits and failovers; one written or deleted meanwhile may
   * or may not be. See {@link ScanStream}.
   *
   * @param from the first key (inclusive); empty: from the first key of all
   * @param to the end (exclusive); empty: to the last key of all
   * @param pageSize the most pairs read at a time, 1 to 9,999
   * @throws InvalidRequestException for bounds or a page size beyond the protocol's limits
   */
  public ScanStream scanStream(byte[] from, byte[] to, int pageSize) {
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    Checks.bound(from, "scan start");
    Checks.bound(to, "scan end");
    checkPageSize(pageSize);
    return new ScanStream((start, limit) -> scanAsync(start, to, limit), from, to, pageSize);
  }

  /**
   * Streams the pairs with keys in {@code [from, to)} in descending key order, from the last key
   * below {@code to} down, at most {@code pageSize} read at a time (and one page ahead), with the
   * guarantees of {@link #scanStream(byte[], byte[], int)}.
   *
   * @param from the lowest key (inclusive); empty: down to the first key of all
   * @param to the end (exclusive); empty: from the last key of all
   * @param pageSize the most pairs read at a time, 1 to 9,999
   * @throws InvalidRequestException for bounds or a page size beyond the protocol's limits
   */
  public ScanStream reverseScanStream(byte[] from, byte[] to, int pageSize) {
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    Checks.bound(from, "scan start");
    Checks.bound(to, "scan end");
    checkPageSize(pageSize);
    return ScanStream.reverse((end, limit) -> reverseScanAsync(from, end, limit), to, pageSize);
  }

  /**
   * Streams the pairs with keys in {@code [from, to)} in descending key order ({@value
   * #SCAN_STREAM_PAGE} pairs a page). See {@link #reverseScanStream(byte[], byte[], int)}.
   */
  public ScanStream reverseScanStream(byte[] from, byte[] to) {
    return reverseScanStream(from, to, SCAN_STREAM_PAGE);
  }

  private static void checkPageSize(int pageSize) {
    if (pageSize < 1 || pageSize >= WireCodec.SCAN_LIMIT_MAX) {
      throw new InvalidRequestException(
          StatusCode.INVALID_ARGUMENT,
          "a scan stream's page size must be 1 to "
              + (WireCodec.SCAN_LIMIT_MAX - 1)
              + ", not "
              + pageSize);
    }
  }

  /**
   * Reads the pairs with keys in {@code [from, to)} in descending key order, at most {@code limit};
   * blocks. See {@link #reverseScanAsync}.
   *
   * @return the pairs, in descending key order
   * @throws KvsException why it failed
   */
  public List<KeyValue> reverseScan(byte[] from, byte[] to, int limit) {
    return await(reverseScanAsync(from, to, limit));
  }

  /**
   * Applies {@code mutations} atomically, all or none; blocks. See {@link #writeAtomicallyAsync}.
   *
   * @throws KvsException why it failed: {@link NotAppliedException} (nothing written, also when the
   *     keys lie in more than one region), {@link OutcomeUnknownException}
   */
  public void writeAtomically(List<Mutation> mutations) {
    await(writeAtomically(mutations, true));
  }

  /**
   * Applies many writes across regions, each region's as atomic batches; blocks. See {@link
   * #writeAllAsync}.
   *
   * @return every write's outcome (it does not throw for writes that failed: see {@link
   *     BatchResult})
   */
  public BatchResult writeAll(List<Mutation> mutations) {
    return await(writeAllAsync(mutations));
  }

  /** Stores each pair; blocks. See {@link #putAllAsync} and {@link #writeAllAsync}. */
  public BatchResult putAll(List<KeyValue> pairs) {
    return await(putAllAsync(pairs));
  }

  /** Deletes each key's value; blocks. See {@link #deleteAllAsync} and {@link #writeAllAsync}. */
  public BatchResult deleteAll(List<byte[]> keys) {
    return await(deleteAllAsync(keys));
  }

  /**
   * Reads the pairs with keys in {@code [from, to)}, at most {@code limit}; blocks. See {@link
   * #scanAsync}.
   *
   * @param from the first key (inclusive); empty: from the first key of all
   * @param to the end (exclusive); empty: to the last key of all
   * @param limit the most pairs to return, at least 1
   * @return the pairs, in key order
   * @throws KvsException why it failed
   */
  public List<KeyValue> scan(byte[] from, byte[] to, int limit) {
    return await(scanAsync(from, to, limit));
  }

  /**
   * Waits for {@code future}, uninterruptibly (operation timeouts bound the wait) but keeping the
   * interrupt status, and throws the KvsException it failed with.
   */
  static <T> T await(CompletableFuture<T> future) {
    DirectConnection.awaitSent(future); // reads this thread's own reply, if it can
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return future.get();
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          throw Operation.unwrap(e);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  // --- Metadata and lifecycle ----------------------------------------------------------------

  /**
   * The region map the client routes by: the latest snapshot of its cache, immutable. It may lag
   * behind ZooKeeper briefly.
   *
   * @return every region, in key order, with its primary and epoch
   */
  public RegionMap regionMap() {
    return metadata.current().regions();
  }

  /** The client's metadata cache (tests). */
  MetadataCache metadata() {
    return metadata;
  }

  /** Connections currently open (tests). */
  int openConnections() {
    return context.connections.open();
  }

  /**
   * Closes the client: outstanding operations fail with {@link ClosedException}, connections, the
   * region map cache and the ZooKeeper session are closed, and later operations fail with {@link
   * ClosedException}. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    context.close();
    context.connections.close();
    shutDown(metadata, curator, factory, blocking, callbacks, timer);
  }

  private static void shutDown(
      MetadataCache metadata,
      CuratorFramework curator,
      ConnectionFactory factory,
      ExecutorService blocking,
      ForkJoinPool callbacks,
      ScheduledThreadPoolExecutor timer) {
    if (metadata != null) {
      metadata.close();
    }
    if (curator != null) {
      curator.close();
    }
    if (factory != null) {
      factory.close();
    }
    timer.shutdownNow();
    blocking.shutdown();
    callbacks.shutdown();
  }
}
