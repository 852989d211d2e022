package io.kvs.client;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.MergeOrigin;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionOrigin;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.cluster.SplitOrigin;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's view of the cluster metadata: Curator caches over the cluster's {@code regions} and
 * {@code servers} znodes, from which an immutable {@link Topology} is rebuilt at every change.
 *
 * <p>The caches follow ZooKeeper with some delay. When a server tells the client its map is out of
 * date, {@link #refreshRegion} re-reads the region's znode (and its primary's) directly; a read
 * newer (by {@code mzxid}) than the cache's copy is used until the cache catches up. Operations
 * waiting for a change register with {@link #wakeOnChange}; requests in flight register with {@link
 * #watchMove}, to learn when their region's primary changed under them. Thread-safe.
 */
final class MetadataCache implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MetadataCache.class);

  /** A decoded znode and the zxid of its last change. */
  private record Versioned<T>(T value, long mzxid) {}

  /** Passed for the data of a read that failed (not a missing node): nothing was learned. */
  private static final byte[] READ_FAILED = new byte[0];

  /** The least time between two direct reads of one znode. */
  static final long REREAD_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

  private final CuratorFramework curator;
  private final ClusterPaths paths;
  private final CuratorCache regionsCache;
  private final CuratorCache serversCache;
  // Counts down once both caches have loaded and the first snapshot is built.
  private final CountDownLatch ready = new CountDownLatch(1);

  // Guarded by this: the caches' content by path, and direct reads newer than it.
  private final Map<String, Versioned<RegionDescriptor>> cachedRegions = new HashMap<>();
  private final Map<String, Versioned<ServerInfo>> cachedServers = new HashMap<>();
  private final Map<String, Versioned<RegionDescriptor>> readRegions = new HashMap<>();
  private final Map<String, Versioned<ServerInfo>> readServers = new HashMap<>();
  private int initializedCaches;
  private boolean started;
  private boolean paused;
  private final Queue<Runnable> deferred = new ArrayDeque<>();

  private volatile Topology current = Topology.EMPTY;
  private volatile boolean closed;
  private final Set<CompletableFuture<Void>> waiters = ConcurrentHashMap.newKeySet();
  private final Map<String, CompletableFuture<Void>> refreshing = new ConcurrentHashMap<>();
  private final Map<String, Long> lastReads = new ConcurrentHashMap<>();
  private final Map<Long, Set<MoveWatch>> moveWatches = new ConcurrentHashMap<>();

  /**
   * A request in flight to {@code primary} for region {@code regionId}: {@link #moved} completes,
   * with the primary the map names now ("" for none), once that is another server. A region split
   * or merged away has not moved while its successors' primary is the one asked (it serves the
   * request in them: a split's daughters start on their parent's primary) or while the map names
   * none of them yet.
   */
  static final class MoveWatch {
    final long regionId;
    final String primary;
    final CompletableFuture<String> moved = new CompletableFuture<>();

    private MoveWatch(long regionId, String primary) {
      this.regionId = regionId;
      this.primary = primary;
    }
  }

  MetadataCache(CuratorFramework curator, ClusterPaths paths) {
    this.curator = curator;
    this.paths = paths;
    this.regionsCache = CuratorCache.build(curator, paths.regions());
    this.serversCache = CuratorCache.build(curator, paths.servers());
    regionsCache.listenable().addListener(listener(paths.regions(), this::onRegionEvent));
    serversCache.listenable().addListener(listener(paths.servers(), this::onServerEvent));
  }

  private CuratorCacheListener listener(String parent, BiConsumer<String, ChildData> onEvent) {
    return CuratorCacheListener.builder()
        .forAll(
            (type, before, after) -> {
              ChildData node = after != null ? after : before;
              if (node != null && isChild(parent, node.getPath())) {
                event(() -> onEvent.accept(node.getPath(), after));
              }
            })
        .forInitialized(() -> event(this::onInitialized))
        .build();
  }

  private static boolean isChild(String parent, String path) {
    return path.length() > parent.length() + 1
        && path.startsWith(parent)
        && path.charAt(parent.length()) == '/'
        && path.indexOf('/', parent.length() + 1) < 0;
  }

  /**
   * Starts the caches and waits until both have loaded what ZooKeeper holds.
   *
   * @throws KvsException if that takes longer than {@code timeout}
   */
  void start(Duration timeout) {
    regionsCache.start();
    serversCache.start();
    try {
      if (!ready.await(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
        throw new KvsException(
            StatusCode.IO_ERROR,
            "could not load the region map of "
                + paths.root()
                + " from ZooKeeper within "
                + Problem.format(timeout));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KvsException(StatusCode.IO_ERROR, "interrupted while loading the region map", e);
    }
  }

  /** The current snapshot. */
  Topology current() {
    return current;
  }

  /**
   * Completes {@code waiter} at the next change of the snapshot, or now if it changed since version
   * {@code seen}. {@link #forget} it if it completes otherwise.
   */
  void wakeOnChange(long seen, CompletableFuture<Void> waiter) {
    waiters.add(waiter);
    if (current.version() != seen || closed) {
      waiters.remove(waiter);
      waiter.complete(null);
    }
  }

  /** Stops tracking {@code waiter}. */
  void forget(CompletableFuture<Void> waiter) {
    waiters.remove(waiter);
  }

  /**
   * Watches region {@code regionId} for a request sent to {@code primary}: the watch's future
   * completes (on the thread that changes the snapshot) when the snapshot names another primary, at
   * once if it does already. {@link #forgetMove} it when the request is answered.
   */
  MoveWatch watchMove(long regionId, String primary) {
    MoveWatch watch = new MoveWatch(regionId, primary);
    moveWatches.computeIfAbsent(regionId, id -> ConcurrentHashMap.newKeySet()).add(watch);
    // Added before reading the snapshot, which rebuild() replaces before it looks at the watches:
    // a change is seen by one of the two.
    String now = primaryOf(current.regions(), regionId, primary);
    if (!now.equals(primary)) {
      forgetMove(watch);
      watch.moved.complete(now);
    }
    return watch;
  }

  /** Stops tracking {@code watch}. */
  void forgetMove(MoveWatch watch) {
    Set<MoveWatch> watches = moveWatches.get(watch.regionId);
    if (watches != null) {
      watches.remove(watch);
    }
  }

  /**
   * The primary serving region {@code regionId}'s keys in {@code map}: its own; for a region split
   * or merged away, its successors' if they share one ("" if not), {@code asked} while the map
   * holds none of them yet (the request was sent to the region's primary, which serves it in its
   * successors once they open there).
   */
  private static String primaryOf(RegionMap map, long regionId, String asked) {
    Optional<RegionDescriptor> region = map.byId(regionId);
    if (region.isPresent()) {
      return region.get().primary();
    }
    String successors = null;
    for (RegionDescriptor candidate : map.regions()) {
      RegionOrigin origin = candidate.origin();
      boolean successor =
          origin instanceof SplitOrigin split
              ? split.parent() == regionId
              : origin instanceof MergeOrigin merge
                  && (merge.left() == regionId || merge.right() == regionId);
      if (successor) {
        if (successors != null && !successors.equals(candidate.primary())) {
          return "";
        }
        successors = candidate.primary();
      }
    }
    return successors == null ? asked : successors;
  }

  /**
   * Re-reads region {@code regionId}'s znode from ZooKeeper, and its primary's if the snapshot does
   * not list it. Concurrent calls for one region share one read. The future completes (never
   * exceptionally) when the reads are done and the snapshot updated.
   */
  CompletableFuture<Void> refreshRegion(long regionId) {
    String path = paths.region(regionId);
    return coalesced(
        path,
        done ->
            read(
                path,
                (data, stat) -> {
                  RegionDescriptor region =
                      learn(
                          path, data, stat, ClusterJson::decodeRegion, cachedRegions, readRegions);
                  if (region != null
                      && !region.primary().isEmpty()
                      && !current.servers().containsKey(region.primary())) {
                    refreshServer(region.primary()).whenComplete((v, e) -> done.complete(null));
                  } else {
                    done.complete(null);
                  }
                }));
  }

  /**
   * Re-reads the list of regions and each region it names that the snapshot lacks: for a key no
   * region of the snapshot holds (a split or merge committed, and the cache has seen the parents go
   * but not their successors yet: tens of milliseconds under load, while the successors may serve
   * already). Coalesced as {@link #refreshRegion}; completes (never exceptionally) when the reads
   * are done.
   */
  CompletableFuture<Void> refreshRegions() {
    String path = paths.regions();
    return coalesced(
        path,
        done -> {
          try {
            curator
                .getChildren()
                .inBackground(
                    (client, event) -> {
                      if (event.getResultCode() != KeeperException.Code.OK.intValue()) {
                        done.complete(null);
                        return;
                      }
                      List<CompletableFuture<Void>> reads = new ArrayList<>();
                      RegionMap known = current.regions();
                      for (String child : event.getChildren()) {
                        long id;
                        try {
                          id = ClusterPaths.regionIdOf(child);
                        } catch (IllegalArgumentException e) {
                          continue; // not a region's node
                        }
                        if (known.byId(id).isEmpty()) {
                          reads.add(refreshRegion(id));
                        }
                      }
                      CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new))
                          .whenComplete((v, e) -> done.complete(null));
                    })
                .forPath(path);
          } catch (Exception e) {
            throw new IllegalStateException("cannot list " + path + ": " + e, e);
          }
        });
  }

  /** Re-reads server {@code serverId}'s znode; like {@link #refreshRegion}. */
  CompletableFuture<Void> refreshServer(String serverId) {
    String path = paths.server(serverId);
    return coalesced(
        path,
        done ->
            read(
                path,
                (data, stat) -> {
                  learn(path, data, stat, ClusterJson::decodeServer, cachedServers, readServers);
                  done.complete(null);
                }));
  }

  /**
   * Runs {@code reader} for {@code path} unless a read of it is running (then shares it) or ended
   * less than {@link #REREAD_INTERVAL_NANOS} ago (then does nothing: the cache or that read has
   * it), so that many operations retrying against one region cost ZooKeeper few reads.
   */
  private CompletableFuture<Void> coalesced(String path, Consumer<CompletableFuture<Void>> reader) {
    Long lastRead = lastReads.get(path);
    if (closed || (lastRead != null && System.nanoTime() - lastRead < REREAD_INTERVAL_NANOS)) {
      return CompletableFuture.completedFuture(null);
    }
    CompletableFuture<Void> mine = new CompletableFuture<>();
    CompletableFuture<Void> running = refreshing.putIfAbsent(path, mine);
    if (running != null) {
      return running;
    }
    mine.whenComplete(
        (v, e) -> {
          lastReads.put(path, System.nanoTime());
          refreshing.remove(path, mine);
        });
    try {
      reader.accept(mine);
    } catch (RuntimeException e) {
      LOG.debug("re-reading {} failed", path, e);
      mine.complete(null);
    }
    return mine;
  }

  /**
   * Reads {@code path} in the background; {@code then} gets its data and stat, nulls if it does not
   * exist, or {@link #READ_FAILED} if the read failed otherwise.
   */
  private void read(String path, BiConsumer<byte[], Stat> then) {
    try {
      curator
          .getData()
          .inBackground(
              (client, event) -> {
                int code = event.getResultCode();
                try {
                  if (code == KeeperException.Code.OK.intValue()) {
                    then.accept(event.getData(), event.getStat());
                  } else if (code == KeeperException.Code.NONODE.intValue()) {
                    then.accept(null, null);
                  } else {
                    LOG.debug("re-reading {}: {}", path, KeeperException.Code.get(code));
                    then.accept(READ_FAILED, null);
                  }
                } catch (RuntimeException e) {
                  LOG.warn("re-reading {} failed", path, e);
                }
              })
          .forPath(path);
    } catch (Exception e) {
      throw new IllegalStateException("cannot read " + path + ": " + e, e);
    }
  }

  /**
   * Records a direct read of {@code path} and rebuilds: the read is used while it is newer than the
   * cache's copy; a missing node drops an earlier read. Returns the value read, or null.
   */
  private <T> T learn(
      String path,
      byte[] data,
      Stat stat,
      Function<byte[], T> decode,
      Map<String, Versioned<T>> cached,
      Map<String, Versioned<T>> reads) {
    if (data == READ_FAILED) {
      return null; // learned nothing
    }
    T value = null;
    if (data != null) {
      try {
        value = decode.apply(data);
      } catch (IllegalArgumentException e) {
        LOG.warn("ignoring malformed znode {}: {}", path, e.getMessage());
      }
    }
    synchronized (this) {
      if (value == null) {
        reads.remove(path);
      } else {
        Versioned<T> inCache = cached.get(path);
        if (inCache == null || inCache.mzxid() < stat.getMzxid()) {
          reads.put(path, new Versioned<>(value, stat.getMzxid()));
        }
      }
      if (started) {
        rebuild();
      }
    }
    return value;
  }

  private void onRegionEvent(String path, ChildData node) {
    update(path, node, ClusterJson::decodeRegion, cachedRegions, readRegions);
  }

  private void onServerEvent(String path, ChildData node) {
    update(path, node, ClusterJson::decodeServer, cachedServers, readServers);
  }

  /** A cache event: {@code node} is the new content, null if the node was deleted. */
  private synchronized <T> void update(
      String path,
      ChildData node,
      Function<byte[], T> decode,
      Map<String, Versioned<T>> cached,
      Map<String, Versioned<T>> reads) {
    if (node == null) {
      cached.remove(path);
      reads.remove(path);
    } else {
      try {
        long mzxid = node.getStat() == null ? 0 : node.getStat().getMzxid();
        cached.put(path, new Versioned<>(decode.apply(node.getData()), mzxid));
      } catch (IllegalArgumentException | NullPointerException e) {
        LOG.warn("ignoring malformed znode {}: {}", path, e.getMessage());
        cached.remove(path);
      }
    }
    if (started) {
      rebuild();
    }
  }

  /** One cache has loaded; once both have, the first snapshot is built. */
  private synchronized void onInitialized() {
    if (++initializedCaches == 2) {
      started = true;
      rebuild();
      ready.countDown();
    }
  }

  /** Runs a cache event now, or later if events are paused (tests). */
  private synchronized void event(Runnable event) {
    if (paused) {
      deferred.add(event);
    } else {
      event.run();
    }
  }

  /**
   * Tests only: while paused, cache events are held back (as if the cache lagged behind ZooKeeper);
   * direct re-reads still apply. Resuming applies the held events in order.
   */
  synchronized void pauseCacheEvents(boolean pause) {
    paused = pause;
    while (!paused && !deferred.isEmpty()) {
      deferred.poll().run();
    }
  }

  /** Rebuilds the snapshot from the caches and the direct reads; wakes waiters if it changed. */
  private synchronized void rebuild() {
    List<RegionDescriptor> regions = merge(cachedRegions, readRegions);
    RegionMap map;
    try {
      map = RegionMap.of(regions);
    } catch (IllegalArgumentException e) {
      try {
        map = RegionMap.of(merge(cachedRegions, new HashMap<>()));
      } catch (IllegalArgumentException again) {
        LOG.warn("keeping the previous region map: {}", again.getMessage());
        map = current.regions();
      }
    }
    Map<String, ServerInfo> servers = new HashMap<>();
    for (ServerInfo server : merge(cachedServers, readServers)) {
      servers.put(server.id(), server);
    }
    Topology before = current;
    if (map.regions().equals(before.regions().regions()) && servers.equals(before.servers())) {
      return;
    }
    current = new Topology(map, Map.copyOf(servers), before.version() + 1);
    LOG.debug(
        "region map version {}: {} regions, {} servers",
        current.version(),
        map.size(),
        servers.size());
    wakeAll();
    for (Map.Entry<Long, Set<MoveWatch>> entry : moveWatches.entrySet()) {
      long regionId = entry.getKey();
      // Read once per region and primary asked: a split parent's successors take a walk of the map.
      Map<String, String> nowByAsked = new HashMap<>(2);
      RegionMap built = map;
      for (Iterator<MoveWatch> it = entry.getValue().iterator(); it.hasNext(); ) {
        MoveWatch watch = it.next();
        String now =
            nowByAsked.computeIfAbsent(watch.primary, asked -> primaryOf(built, regionId, asked));
        if (!watch.primary.equals(now)) {
          it.remove();
          watch.moved.complete(now);
        }
      }
    }
  }

  /**
   * The cache's values, each replaced by a newer direct read; reads the cache caught up with go.
   */
  private static <T> List<T> merge(
      Map<String, Versioned<T>> cached, Map<String, Versioned<T>> reads) {
    List<T> merged = new ArrayList<>(cached.size() + reads.size());
    for (Map.Entry<String, Versioned<T>> entry : cached.entrySet()) {
      Versioned<T> read = reads.get(entry.getKey());
      if (read != null && read.mzxid() > entry.getValue().mzxid()) {
        merged.add(read.value());
      } else {
        if (read != null) {
          reads.remove(entry.getKey());
        }
        merged.add(entry.getValue().value());
      }
    }
    for (Map.Entry<String, Versioned<T>> entry : reads.entrySet()) {
      if (!cached.containsKey(entry.getKey())) {
        merged.add(entry.getValue().value());
      }
    }
    return merged;
  }

  private void wakeAll() {
    for (Iterator<CompletableFuture<Void>> it = waiters.iterator(); it.hasNext(); ) {
      CompletableFuture<Void> waiter = it.next();
      it.remove();
      waiter.complete(null);
    }
  }

  /** Stops the caches and wakes every waiter. The Curator client is the caller's to close. */
  @Override
  public void close() {
    closed = true;
    regionsCache.close();
    serversCache.close();
    wakeAll();
  }
}
