package io.kvs.master;

import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.MergeRequest;
import io.kvs.core.cluster.MoveRequest;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.cluster.SplitRequest;
import io.kvs.core.cluster.ZooKeeperReads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's reads and writes of cluster metadata. Every change is conditional: regions are
 * replaced only at the version read ({@link KeeperException.BadVersionException} otherwise), and
 * the cluster is created in one transaction, so two masters can never both apply a change.
 */
final class RegionStore {
  private static final Logger LOG = LoggerFactory.getLogger(RegionStore.class);

  /** A region and the znode version it was read at. */
  record Versioned(RegionDescriptor region, int version) {}

  /**
   * Reads in flight at most while {@link #regions} reads every region: ZooKeeper's own bound on
   * requests outstanding (1,000 by default) is where it starts throttling every client.
   */
  static final int READS_IN_FLIGHT = 500;

  /** Bound on waiting for one read's answer (Curator retries a lost connection meanwhile). */
  static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

  private final CuratorFramework curator;
  private final ClusterPaths paths;

  RegionStore(CuratorFramework curator, ClusterPaths paths) {
    this.curator = curator;
    this.paths = paths;
  }

  Optional<ClusterConfig> config() throws Exception {
    try {
      return Optional.of(ClusterJson.decodeConfig(curator.getData().forPath(paths.config())));
    } catch (KeeperException.NoNodeException e) {
      return Optional.empty();
    }
  }

  /**
   * Every region with its version, by id. The znodes are read at once, not one round trip after
   * another ({@link #readAll}): a pass reads every region, and one by one 2,000 regions took most
   * of a 540 ms pass (docs/BENCHMARKS.md, "Scale of the master").
   */
  Map<Long, Versioned> regions() throws Exception {
    Map<Long, Versioned> regions = new TreeMap<>();
    List<String> children;
    try {
      children = curator.getChildren().forPath(paths.regions());
    } catch (KeeperException.NoNodeException e) {
      return regions;
    }
    readAll(
        paths.regions(),
        children,
        (data, stat) -> {
          RegionDescriptor region = ClusterJson.decodeRegion(data);
          regions.put(region.id(), new Versioned(region, stat.getVersion()));
        });
    return regions;
  }

  /**
   * Passes over which every region this master knows is read again, a slice per pass ({@link
   * #regionsForPass}): only this master writes regions, so what it read and wrote since is the map,
   * and every write is conditional anyway (a stale version fails, and the next pass reads
   * everything again); reading each region again within so many passes bounds what an unnoticed
   * change could cost. (It was a full read every 10th pass: 560-600 ms of one pass in 10 at 10,000
   * regions, and the longest pass of a recovery whenever the two met.)
   */
  static final int PASSES_PER_FULL_READ = 10;

  // What the pass thread last read of every region, with its own writes since; null: read it all.
  private Map<Long, Versioned> known; // under this
  private NextId nextId; // under this: the counter as this master last wrote it, null: read it
  private int nextSlice; // under this: the ids modulo PASSES_PER_FULL_READ the next pass reads

  /**
   * The regions for a pass of the active master: those it knows (its last full read with its own
   * writes since), when ZooKeeper lists the same region ids, with the slice of them this pass reads
   * again (ids equal to the pass's number modulo {@link #PASSES_PER_FULL_READ}); otherwise every
   * region read again ({@link #regions}). Reading 10,000 regions took two thirds of a 1 s pass even
   * with the reads in flight together (docs/BENCHMARKS.md, "Scale of the master"); listing their
   * ids is one round trip.
   */
  synchronized Map<Long, Versioned> regionsForPass() throws Exception {
    if (known != null) {
      List<String> children = children(paths.regions());
      boolean same = children.size() == known.size();
      for (int i = 0; same && i < children.size(); i++) {
        same = known.containsKey(ClusterPaths.regionIdOf(children.get(i)));
      }
      if (same) {
        int slice = nextSlice;
        nextSlice = (nextSlice + 1) % PASSES_PER_FULL_READ;
        List<String> again =
            children.stream()
                .filter(child -> ClusterPaths.regionIdOf(child) % PASSES_PER_FULL_READ == slice)
                .toList();
        readAll(
            paths.regions(),
            again,
            (data, stat) -> {
              RegionDescriptor region = ClusterJson.decodeRegion(data);
              Versioned held = known.get(region.id());
              if (held == null || held.version() != stat.getVersion()) {
                LOG.warn(
                    "region {} changed in ZooKeeper without this master's knowing (version {},"
                        + " known {}): taken as read",
                    region.id(),
                    stat.getVersion(),
                    held == null ? -1 : held.version());
                known.put(region.id(), new Versioned(region, stat.getVersion()));
              }
            });
        return new TreeMap<>(known);
      }
    }
    known = regions();
    nextSlice = 0;
    return new TreeMap<>(known);
  }

  /**
   * The regions this master knows (its last full read with its own writes since), without reading
   * ZooKeeper; null if it knows none.
   */
  synchronized Map<Long, Versioned> knownRegions() {
    return known == null ? null : new TreeMap<>(known);
  }

  /**
   * Forgets the regions this master knows: its next pass reads them all (it lost or won the
   * election, or a write of its own failed: someone else may have written).
   */
  synchronized void forget() {
    known = null;
    nextId = null;
  }

  /** Records a write of this master's that succeeded. */
  private synchronized void wrote(RegionDescriptor region, int version) {
    if (known != null) {
      known.put(region.id(), new Versioned(region, version));
    }
  }

  /** Live servers by id, read at once as {@link #regions} are. */
  Map<String, ServerInfo> servers() throws Exception {
    Map<String, ServerInfo> servers = new TreeMap<>();
    List<String> children;
    try {
      children = curator.getChildren().forPath(paths.servers());
    } catch (KeeperException.NoNodeException e) {
      return servers;
    }
    readAll(
        paths.servers(),
        children,
        (data, stat) -> {
          ServerInfo info = ClusterJson.decodeServer(data);
          servers.put(info.id(), info);
        });
    return servers;
  }

  private void readAll(String parent, List<String> children, BiConsumer<byte[], Stat> found)
      throws Exception {
    ZooKeeperReads.readAll(curator, parent, children, READS_IN_FLIGHT, READ_TIMEOUT, found);
  }

  /** The operators' pending and refused move requests, by region id. */
  Map<Long, MoveRequest> moves() throws Exception {
    Map<Long, MoveRequest> moves = new TreeMap<>();
    for (String child : children(paths.moves())) {
      try {
        moves.put(
            ClusterPaths.regionIdOf(child),
            ClusterJson.decodeMove(curator.getData().forPath(paths.moves() + "/" + child)));
      } catch (KeeperException.NoNodeException e) {
        // withdrawn meanwhile
      } catch (IllegalArgumentException e) {
        // not written by our tools: refuse it where the operator will see it
        curator
            .setData()
            .forPath(
                paths.moves() + "/" + child,
                ClusterJson.encode(
                    MoveRequest.to("?").refusedFor("unreadable request: " + e.getMessage())));
      }
    }
    return moves;
  }

  /** Deletes the move request of {@code regionId} (done); nothing if it is gone. */
  void finishMove(long regionId) throws Exception {
    try {
      curator.delete().forPath(paths.move(regionId));
    } catch (KeeperException.NoNodeException e) {
      // withdrawn meanwhile
    }
  }

  /** Records why the move request of {@code regionId} is refused, for the operator's tool. */
  void refuseMove(long regionId, MoveRequest refused) throws Exception {
    try {
      curator.setData().forPath(paths.move(regionId), ClusterJson.encode(refused));
    } catch (KeeperException.NoNodeException e) {
      // withdrawn meanwhile
    }
  }

  /** The operators' pending and refused split requests, by region id. */
  Map<Long, SplitRequest> splitRequests() throws Exception {
    Map<Long, SplitRequest> splits = new TreeMap<>();
    for (String child : children(paths.splits())) {
      try {
        splits.put(
            ClusterPaths.regionIdOf(child),
            ClusterJson.decodeSplit(curator.getData().forPath(paths.splits() + "/" + child)));
      } catch (KeeperException.NoNodeException e) {
        // withdrawn meanwhile
      } catch (IllegalArgumentException e) {
        curator
            .setData()
            .forPath(
                paths.splits() + "/" + child,
                ClusterJson.encode(
                    SplitRequest.at(new byte[0])
                        .refusedFor("unreadable request: " + e.getMessage())));
      }
    }
    return splits;
  }

  /** Asks for region {@code regionId} to split (the master's own request); nothing if one is. */
  void requestSplit(long regionId, SplitRequest request) throws Exception {
    try {
      curator
          .create()
          .creatingParentsIfNeeded()
          .forPath(paths.split(regionId), ClusterJson.encode(request));
    } catch (KeeperException.NodeExistsException e) {
      // asked already
    }
  }

  /** Records why the split request of {@code regionId} is refused, for the operator's tool. */
  void refuseSplit(long regionId, SplitRequest refused) throws Exception {
    try {
      curator.setData().forPath(paths.split(regionId), ClusterJson.encode(refused));
    } catch (KeeperException.NoNodeException e) {
      // withdrawn meanwhile
    }
  }

  /** The operators' pending and refused merge requests, by the lower region's id. */
  Map<Long, MergeRequest> mergeRequests() throws Exception {
    Map<Long, MergeRequest> merges = new TreeMap<>();
    for (String child : children(paths.merges())) {
      try {
        merges.put(
            ClusterPaths.regionIdOf(child),
            ClusterJson.decodeMerge(curator.getData().forPath(paths.merges() + "/" + child)));
      } catch (KeeperException.NoNodeException e) {
        // withdrawn meanwhile
      } catch (IllegalArgumentException e) {
        curator
            .setData()
            .forPath(
                paths.merges() + "/" + child,
                ClusterJson.encode(
                    MergeRequest.PENDING.refusedFor("unreadable request: " + e.getMessage())));
      }
    }
    return merges;
  }

  /** Asks for region {@code regionId} to merge with its neighbour above; nothing if one is. */
  void requestMerge(long regionId) throws Exception {
    try {
      curator
          .create()
          .creatingParentsIfNeeded()
          .forPath(paths.merge(regionId), ClusterJson.encode(MergeRequest.PENDING));
    } catch (KeeperException.NodeExistsException e) {
      // asked already
    }
  }

  /** Records why the merge request of {@code regionId} is refused, for the operator's tool. */
  void refuseMerge(long regionId, MergeRequest refused) throws Exception {
    try {
      curator.setData().forPath(paths.merge(regionId), ClusterJson.encode(refused));
    } catch (KeeperException.NoNodeException e) {
      // withdrawn meanwhile
    }
  }

  /**
   * Commits a merge in one transaction, its commit point: {@code left} and {@code right} deleted at
   * the versions they were read at, {@code merged} created, the id counter moved past it (at the
   * version read) and the request deleted.
   */
  void commitMerge(Versioned left, Versioned right, RegionDescriptor merged, NextId next)
      throws Exception {
    replace(List.of(left, right), List.of(merged), next, paths.merge(left.region().id()));
  }

  /** The id counter for new regions: the next id and the znode's version (-1: none yet). */
  record NextId(long id, int version) {}

  /**
   * The next region id: the counter's, or one above every id in {@code ids} before the first. The
   * counter as this master's last split or merge left it is not read again (a ZooKeeper round trip
   * inside a split's unavailable window); the transaction that uses it is conditional on its
   * version, so a counter moved by anyone else fails it and the next read goes to ZooKeeper.
   */
  NextId nextRegionId(Iterable<Long> ids) throws Exception {
    synchronized (this) {
      if (nextId != null) {
        return nextId;
      }
    }
    try {
      Stat stat = new Stat();
      byte[] data = curator.getData().storingStatIn(stat).forPath(paths.nextRegionId());
      return new NextId(
          Long.parseLong(new String(data, java.nio.charset.StandardCharsets.US_ASCII)),
          stat.getVersion());
    } catch (KeeperException.NoNodeException e) {
      long max = 0;
      for (long id : ids) {
        max = Math.max(max, id);
      }
      return new NextId(max + 1, -1);
    }
  }

  /**
   * Commits a split in one transaction, its commit point: {@code parent} deleted at the version it
   * was read at, {@code daughters} created, the id counter moved past them (at the version read),
   * and the split request, if {@code requested}, deleted. Any of them changed meanwhile fails it
   * whole ({@link KeeperException}).
   */
  void commitSplit(
      Versioned parent, List<RegionDescriptor> daughters, NextId next, boolean requested)
      throws Exception {
    replace(List.of(parent), daughters, next, requested ? paths.split(parent.region().id()) : null);
  }

  /**
   * The one transaction of a split or a merge: {@code gone} deleted at the versions they were read
   * at, {@code made} created, the id counter moved past them (at the version read) and {@code
   * request} (null: none) deleted. Any of them changed meanwhile fails it whole.
   */
  private void replace(
      List<Versioned> gone, List<RegionDescriptor> made, NextId next, String request)
      throws Exception {
    long after = made.stream().mapToLong(RegionDescriptor::id).max().orElseThrow() + 1;
    byte[] counter = Long.toString(after).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    List<CuratorOp> ops = new ArrayList<>();
    ops.add(
        next.version() < 0
            ? curator.transactionOp().create().forPath(paths.nextRegionId(), counter)
            : curator
                .transactionOp()
                .setData()
                .withVersion(next.version())
                .forPath(paths.nextRegionId(), counter));
    for (Versioned region : gone) {
      ops.add(
          curator
              .transactionOp()
              .delete()
              .withVersion(region.version())
              .forPath(paths.region(region.region().id())));
    }
    for (RegionDescriptor region : made) {
      ops.add(
          curator
              .transactionOp()
              .create()
              .withMode(CreateMode.PERSISTENT)
              .forPath(paths.region(region.id()), ClusterJson.encode(region)));
    }
    if (request != null) {
      ops.add(curator.transactionOp().delete().forPath(request));
    }
    try {
      curator.transaction().forOperations(ops);
    } catch (Exception e) {
      forget(); // the next pass reads them all, the next split or merge the counter
      throw e;
    }
    synchronized (this) {
      nextId = new NextId(after, next.version() + 1); // created at version 0 when it was -1
      // What this master knows stays the map: the regions gone, those made at their first version.
      if (known != null) {
        gone.forEach(region -> known.remove(region.region().id()));
        made.forEach(region -> known.put(region.id(), new Versioned(region, 0)));
      }
    }
  }

  /** Whether an operator switched the balancer off for the cluster ({@code ./kvs admin}). */
  boolean balancerSwitchedOff() throws Exception {
    return curator.checkExists().forPath(paths.balancerOff()) != null;
  }

  /** The servers being decommissioned. */
  Set<String> decommissioned() throws Exception {
    return new TreeSet<>(children(paths.decommissioned()));
  }

  private List<String> children(String path) throws Exception {
    try {
      return curator.getChildren().forPath(path);
    } catch (KeeperException.NoNodeException e) {
      return List.of();
    }
  }

  /**
   * Regions created per transaction at most: ZooKeeper refuses a request over 1 MiB (its {@code
   * jute.maxbuffer}) and closes the connection, and a region's create is about 200 bytes, so the
   * one transaction of every region that created a cluster before could not hold 10,000 regions
   * (1.9 MB): the master retried it until its session lapsed.
   */
  static final int REGIONS_PER_TRANSACTION = 1_000;

  /**
   * Creates the cluster: every region, then the config, in transactions of at most {@link
   * #REGIONS_PER_TRANSACTION} regions, each also checking that {@code fence} (this master's node in
   * the election) exists, so a master that lost its leadership half-way writes nothing more. The
   * config is the commit point, created last (it fails if it exists): without it there is no
   * cluster, and region znodes a creation that stopped half-way left are deleted first.
   */
  void createCluster(ClusterConfig config, List<RegionDescriptor> regions, String fence)
      throws Exception {
    forget();
    ensurePath(paths.regions());
    List<String> left = children(paths.regions());
    for (int from = 0; from < left.size(); from += REGIONS_PER_TRANSACTION) {
      List<CuratorOp> ops = new ArrayList<>();
      ops.add(curator.transactionOp().check().forPath(fence));
      for (String child :
          left.subList(from, Math.min(left.size(), from + REGIONS_PER_TRANSACTION))) {
        ops.add(curator.transactionOp().delete().forPath(paths.regions() + "/" + child));
      }
      curator.transaction().forOperations(ops);
    }
    for (int from = 0; from < regions.size(); from += REGIONS_PER_TRANSACTION) {
      List<CuratorOp> ops = new ArrayList<>();
      ops.add(curator.transactionOp().check().forPath(fence));
      for (RegionDescriptor region :
          regions.subList(from, Math.min(regions.size(), from + REGIONS_PER_TRANSACTION))) {
        ops.add(
            curator
                .transactionOp()
                .create()
                .withMode(CreateMode.PERSISTENT)
                .forPath(paths.region(region.id()), ClusterJson.encode(region)));
      }
      curator.transaction().forOperations(ops);
    }
    curator
        .transaction()
        .forOperations(
            curator.transactionOp().check().forPath(fence),
            curator
                .transactionOp()
                .create()
                .withMode(CreateMode.PERSISTENT)
                .forPath(paths.config(), ClusterJson.encode(config)));
  }

  /** How one write of {@link #updateAll} ended: the region's new version, or its failure. */
  record Written(int version, KeeperException failure) {}

  /**
   * Replaces each of {@code updates}' regions at the version given with it, the writes in flight
   * together (at most {@link #READS_IN_FLIGHT} at a time) rather than one round trip after another:
   * ZooKeeper commits writes that arrive together with one log sync, so a pass recording a thousand
   * regions' opens pays a few syncs, not a thousand (docs/BENCHMARKS.md, "Scale of the master").
   * Each write is conditional as {@link #update} is; how each ended, by region id.
   */
  Map<Long, Written> updateAll(List<Versioned> updates) throws Exception {
    record Ended(long regionId, CuratorEvent event) {}
    BlockingQueue<Ended> ended = new ArrayBlockingQueue<>(READS_IN_FLIGHT);
    Map<Long, Written> written = new TreeMap<>();
    Map<Long, RegionDescriptor> byId = new java.util.HashMap<>();
    updates.forEach(update -> byId.put(update.region().id(), update.region()));
    int sent = 0;
    while (written.size() < updates.size()) {
      while (sent < updates.size() && sent - written.size() < READS_IN_FLIGHT) {
        RegionDescriptor region = updates.get(sent).region();
        curator
            .setData()
            .withVersion(updates.get(sent).version())
            .inBackground((client, event) -> ended.add(new Ended(region.id(), event)))
            .forPath(paths.region(region.id()), ClusterJson.encode(region));
        sent++;
      }
      Ended end = ended.poll(READ_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      if (end == null) {
        forget();
        throw KeeperException.create(KeeperException.Code.OPERATIONTIMEOUT, paths.regions());
      }
      KeeperException.Code code = KeeperException.Code.get(end.event().getResultCode());
      if (code == KeeperException.Code.OK) {
        wrote(byId.get(end.regionId()), end.event().getStat().getVersion());
      } else {
        forget();
      }
      written.put(
          end.regionId(),
          code == KeeperException.Code.OK
              ? new Written(end.event().getStat().getVersion(), null)
              : new Written(-1, KeeperException.create(code, end.event().getPath())));
    }
    return written;
  }

  /** Replaces a region at the version it was read at; the new version. */
  int update(RegionDescriptor region, int version) throws Exception {
    try {
      int written =
          curator
              .setData()
              .withVersion(version)
              .forPath(paths.region(region.id()), ClusterJson.encode(region))
              .getVersion();
      wrote(region, written);
      return written;
    } catch (Exception e) {
      forget();
      throw e;
    }
  }

  void ensurePath(String path) throws Exception {
    try {
      curator.create().creatingParentsIfNeeded().forPath(path);
    } catch (KeeperException.NodeExistsException e) {
      // there already
    }
  }
}
