package io.kvs.tools.admin;

import io.kvs.core.KvsException;
import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.MergeRequest;
import io.kvs.core.cluster.MoveRequest;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.cluster.SplitRequest;
import io.kvs.core.cluster.ZooKeeperReads;
import io.kvs.core.control.ControlClient;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlReply;
import io.kvs.core.security.SecurityOptions;
import io.kvs.core.security.ZooKeeperAcls;
import io.kvs.tools.ClusterTarget;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;

/**
 * An operator's session with one cluster: reads what ZooKeeper holds, asks servers for counters,
 * and files requests for the master (moves, decommissions) and waits for them. Not thread-safe.
 */
public final class Admin implements AutoCloseable {
  /** How often a wait re-reads the region map. */
  private static final Duration POLL = Duration.ofMillis(100);

  /** Bound on one server's answer to a counters request. */
  private static final Duration STATS_TIMEOUT = Duration.ofSeconds(5);

  private final CuratorFramework curator;
  private final ClusterPaths paths;
  private final ControlClient control;

  private Admin(ClusterTarget target, SecurityOptions security, Duration connectTimeout)
      throws InterruptedException {
    paths = new ClusterPaths(target.cluster());
    control = new ControlClient(STATS_TIMEOUT, security);
    curator =
        ZooKeeperAcls.apply(
                CuratorFrameworkFactory.builder()
                    .connectString(target.zookeeper())
                    .connectionTimeoutMs((int) connectTimeout.toMillis())
                    .sessionTimeoutMs(30_000)
                    .retryPolicy(new ExponentialBackoffRetry(100, 5, 2_000)),
                security.zookeeper())
            .build();
    curator.start();
    if (!curator.blockUntilConnected(
        (int) connectTimeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
      curator.close();
      control.close();
      throw new IllegalStateException(
          "cannot reach ZooKeeper at " + target.zookeeper() + " within " + connectTimeout);
    }
  }

  /**
   * Connects to {@code target}'s ZooKeeper, waiting at most {@code connectTimeout}.
   *
   * @param security the cluster secret or TLS certificate its servers' control RPC asks for, and
   *     the ZooKeeper credentials its znodes are guarded with (requests are refused without them)
   */
  public static Admin connect(
      ClusterTarget target, SecurityOptions security, Duration connectTimeout)
      throws InterruptedException {
    return new Admin(target, security, connectTimeout);
  }

  /** The live servers by id. */
  public Map<String, ServerInfo> servers() throws Exception {
    Map<String, ServerInfo> servers = new TreeMap<>();
    for (String id : children(paths.servers())) {
      try {
        servers.put(id, ClusterJson.decodeServer(curator.getData().forPath(paths.server(id))));
      } catch (KeeperException.NoNodeException e) {
        // gone meanwhile
      }
    }
    return servers;
  }

  /** The region map. */
  public RegionMap regions() throws Exception {
    List<RegionDescriptor> regions = new ArrayList<>();
    ZooKeeperReads.readAll(
        curator,
        paths.regions(),
        children(paths.regions()),
        (data, stat) -> regions.add(ClusterJson.decodeRegion(data)));
    return RegionMap.of(regions);
  }

  /** The servers being decommissioned. */
  public Set<String> decommissioned() throws Exception {
    return new TreeSet<>(children(paths.decommissioned()));
  }

  /** Pending and refused move requests by region id. */
  public Map<Long, MoveRequest> moves() throws Exception {
    Map<Long, MoveRequest> moves = new TreeMap<>();
    for (String child : children(paths.moves())) {
      try {
        moves.put(
            ClusterPaths.regionIdOf(child),
            ClusterJson.decodeMove(curator.getData().forPath(paths.moves() + "/" + child)));
      } catch (KeeperException.NoNodeException e) {
        // done meanwhile
      }
    }
    return moves;
  }

  /**
   * Asks the master to make {@code server} the primary of region {@code regionId} (a planned
   * handover). Checked here first so that a mistake gets its answer at once.
   *
   * @throws IllegalArgumentException if there is no such region, {@code server} is no backup of it,
   *     not live, or being decommissioned
   */
  public void requestMove(long regionId, String server) throws Exception {
    RegionDescriptor region = region(regionId);
    if (region.primary().equals(server)) {
      throw new IllegalArgumentException(server + " is already the primary of region " + regionId);
    }
    if (!region.backups().contains(server)) {
      throw new IllegalArgumentException(
          server
              + " is no member of region "
              + regionId
              + "; its backups are "
              + region.backups()
              + " (a primary moves to one of them)");
    }
    if (!servers().containsKey(server)) {
      throw new IllegalArgumentException(server + " is not a live server");
    }
    if (decommissioned().contains(server)) {
      throw new IllegalArgumentException(server + " is being decommissioned");
    }
    byte[] request = ClusterJson.encode(MoveRequest.to(server));
    try {
      curator.create().creatingParentsIfNeeded().forPath(paths.move(regionId), request);
    } catch (KeeperException.NodeExistsException e) {
      curator.setData().forPath(paths.move(regionId), request); // replaces an earlier request
    }
  }

  /**
   * Waits until region {@code regionId} is open with {@code server} as its primary.
   *
   * @return null once done, else why not: the master's refusal (the request is then withdrawn) or
   *     that the wait ran out (the request stays; the master carries it out when it can)
   */
  public String awaitMove(long regionId, String server, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      // The request first: the master records the handover in the map before it deletes the
      // request, so a region read after a request found gone shows the handover. (Read the other
      // way round, a handover between the two reads looked like a recovery undoing it.)
      MoveRequest request = moves().get(regionId);
      RegionDescriptor region = region(regionId);
      if (region.primary().equals(server)
          && region.state() == RegionState.OPEN
          && (request == null || !request.to().equals(server))) {
        return null;
      }
      if (request == null && !region.primary().equals(server)) {
        return "the master handed the primary over, but region "
            + regionId
            + " is now led by "
            + region.primary()
            + " (a failure recovery changed its group meanwhile)";
      }
      if (request != null && request.isRefused()) {
        withdrawMove(regionId);
        return "the master refused: " + request.refused();
      }
      if (System.nanoTime() > deadline) {
        return "not done within "
            + timeout.toSeconds()
            + " s (region "
            + regionId
            + " is "
            + region.state()
            + " at epoch "
            + region.epoch()
            + ", primary "
            + region.primary()
            + ", catching up "
            + region.joining()
            + "); the request stays pending";
      }
      Thread.sleep(POLL.toMillis()); // polling ZooKeeper at a bounded rate while waiting
    }
  }

  /**
   * Asks the master to split region {@code regionId} at {@code key} (empty: its middle by size,
   * which its primary picks).
   *
   * @throws IllegalArgumentException if there is no such region or the key is not inside it
   */
  public void requestSplit(long regionId, byte[] key) throws Exception {
    RegionDescriptor region = region(regionId);
    if (key.length > 0 && !region.splitsAt(key)) {
      throw new IllegalArgumentException(
          "key "
              + Keys.print(key)
              + " is not inside region "
              + regionId
              + " "
              + region.rangeText());
    }
    byte[] request = ClusterJson.encode(SplitRequest.at(key));
    try {
      curator.create().creatingParentsIfNeeded().forPath(paths.split(regionId), request);
    } catch (KeeperException.NodeExistsException e) {
      curator.setData().forPath(paths.split(regionId), request); // replaces an earlier request
    }
  }

  /**
   * Waits until region {@code parent} (as read before the request) has split and every region
   * covering its range is open.
   *
   * @return the regions covering its range once done
   * @throws IllegalStateException with why not: the master's refusal (the request is then
   *     withdrawn) or that the wait ran out (the request stays)
   */
  public List<RegionDescriptor> awaitSplit(RegionDescriptor parent, Duration timeout)
      throws Exception {
    long regionId = parent.id();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      SplitRequest request = null;
      try {
        request = ClusterJson.decodeSplit(curator.getData().forPath(paths.split(regionId)));
      } catch (KeeperException.NoNodeException e) {
        // done, or withdrawn
      }
      RegionMap map = regions();
      if (request == null && map.byId(regionId).isEmpty()) {
        List<RegionDescriptor> covering = map.within(parent.start(), parent.end());
        if (covering.size() >= 2
            && covering.stream().allMatch(r -> r.state() == RegionState.OPEN)) {
          return covering;
        }
      } else if (request == null) {
        throw new IllegalStateException("the split request of region " + regionId + " is gone");
      } else if (request.isRefused()) {
        withdrawSplit(regionId);
        throw new IllegalStateException("the master refused: " + request.refused());
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "not done within " + timeout.toSeconds() + " s; the request stays pending");
      }
      Thread.sleep(POLL.toMillis()); // polling ZooKeeper at a bounded rate while waiting
    }
  }

  /**
   * Asks the master to merge region {@code regionId} with its neighbour above.
   *
   * @return the neighbour, as read now
   * @throws IllegalArgumentException if there is no such region or it is the last one
   */
  public RegionDescriptor requestMerge(long regionId) throws Exception {
    RegionDescriptor region = region(regionId);
    RegionDescriptor right =
        region.end().length == 0
            ? null
            : regions().regions().stream()
                .filter(other -> java.util.Arrays.equals(other.start(), region.end()))
                .findFirst()
                .orElse(null);
    if (right == null) {
      throw new IllegalArgumentException(
          "region " + regionId + " " + region.rangeText() + " has no neighbour above it");
    }
    byte[] request = ClusterJson.encode(MergeRequest.PENDING);
    try {
      curator.create().creatingParentsIfNeeded().forPath(paths.merge(regionId), request);
    } catch (KeeperException.NodeExistsException e) {
      curator.setData().forPath(paths.merge(regionId), request); // replaces an earlier request
    }
    return right;
  }

  /**
   * Waits until regions {@code left} and {@code right} (as read before the request) have merged and
   * the merged region is open.
   *
   * @return the merged region
   * @throws IllegalStateException with why not: the master's refusal (the request is then
   *     withdrawn) or that the wait ran out (the request stays)
   */
  public RegionDescriptor awaitMerge(
      RegionDescriptor left, RegionDescriptor right, Duration timeout) throws Exception {
    long regionId = left.id();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      MergeRequest request = null;
      try {
        request = ClusterJson.decodeMerge(curator.getData().forPath(paths.merge(regionId)));
      } catch (KeeperException.NoNodeException e) {
        // done, or withdrawn
      }
      RegionMap map = regions();
      if (request == null && map.byId(regionId).isEmpty() && map.byId(right.id()).isEmpty()) {
        List<RegionDescriptor> covering = map.within(left.start(), right.end());
        if (covering.size() == 1 && covering.get(0).state() == RegionState.OPEN) {
          return covering.get(0);
        }
      } else if (request == null) {
        throw new IllegalStateException("the merge request of region " + regionId + " is gone");
      } else if (request.isRefused()) {
        withdrawMerge(regionId);
        throw new IllegalStateException("the master refused: " + request.refused());
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "not done within " + timeout.toSeconds() + " s; the request stays pending");
      }
      Thread.sleep(POLL.toMillis()); // polling ZooKeeper at a bounded rate while waiting
    }
  }

  /** Withdraws the merge request of {@code regionId} (nothing if there is none). */
  public void withdrawMerge(long regionId) throws Exception {
    try {
      curator.delete().forPath(paths.merge(regionId));
    } catch (KeeperException.NoNodeException e) {
      // none
    }
  }

  /** Withdraws the split request of {@code regionId} (nothing if there is none). */
  public void withdrawSplit(long regionId) throws Exception {
    try {
      curator.delete().forPath(paths.split(regionId));
    } catch (KeeperException.NoNodeException e) {
      // none
    }
  }

  /** Withdraws the move request of {@code regionId} (nothing if there is none). */
  public void withdrawMove(long regionId) throws Exception {
    try {
      curator.delete().forPath(paths.move(regionId));
    } catch (KeeperException.NoNodeException e) {
      // none
    }
  }

  /**
   * Marks {@code server} decommissioned: the master moves every replica off it and places none
   * there until {@link #recommission}.
   *
   * @throws IllegalArgumentException if {@code server} is neither live nor a member of a region
   */
  public void decommission(String server) throws Exception {
    boolean member =
        regions().regions().stream().anyMatch(region -> region.members().contains(server));
    if (!member && !servers().containsKey(server)) {
      throw new IllegalArgumentException(
          server + " is neither a live server nor a member of any region");
    }
    try {
      curator.create().creatingParentsIfNeeded().forPath(paths.decommissioned(server));
    } catch (KeeperException.NodeExistsException e) {
      // decommissioned already
    }
  }

  /**
   * Switches the master's balancer on or off for the whole cluster (a master started with {@code
   * --balancer off} stays off either way); whether that changed anything.
   */
  public boolean switchBalancer(boolean on) throws Exception {
    try {
      if (on) {
        curator.delete().forPath(paths.balancerOff());
      } else {
        curator.create().creatingParentsIfNeeded().forPath(paths.balancerOff());
      }
      return true;
    } catch (KeeperException.NoNodeException | KeeperException.NodeExistsException e) {
      return false; // as asked already
    }
  }

  /** Whether the balancer is switched on for the cluster (not off by {@link #switchBalancer}). */
  public boolean balancerOn() throws Exception {
    return curator.checkExists().forPath(paths.balancerOff()) == null;
  }

  /** Lets {@code server} hold replicas again; whether it was decommissioned. */
  public boolean recommission(String server) throws Exception {
    try {
      curator.delete().forPath(paths.decommissioned(server));
      return true;
    } catch (KeeperException.NoNodeException e) {
      return false;
    }
  }

  /** The regions {@code server} is a member of. */
  public List<RegionDescriptor> regionsOf(String server) throws Exception {
    return regions().regions().stream()
        .filter(region -> region.members().contains(server))
        .toList();
  }

  /**
   * Waits until no region lists {@code server} as a member.
   *
   * @return the regions still listing it when the wait ran out (empty once drained)
   */
  public List<RegionDescriptor> awaitDrained(String server, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      List<RegionDescriptor> left = regionsOf(server);
      if (left.isEmpty() || System.nanoTime() > deadline) {
        return left;
      }
      Thread.sleep(POLL.toMillis()); // polling ZooKeeper at a bounded rate while waiting
    }
  }

  /**
   * Region {@code regionId}'s counters on each member, in group order (primary first); a member
   * that could not answer maps to an empty map and its error under {@code error}.
   */
  public Map<String, Map<String, Long>> regionStats(long regionId) throws Exception {
    RegionDescriptor region = region(regionId);
    Map<String, ServerInfo> servers = servers();
    Map<String, Map<String, Long>> stats = new LinkedHashMap<>();
    for (String member : region.members()) {
      ServerInfo info = servers.get(member);
      if (info == null) {
        stats.put(member, Map.of());
        continue;
      }
      try {
        ControlReply reply =
            control.call(
                info.host(),
                info.controlPort(),
                new ControlCommand.RegionStats(regionId),
                STATS_TIMEOUT);
        stats.put(member, reply.isOk() ? reply.stats() : Map.of());
      } catch (KvsException e) {
        stats.put(member, Map.of());
      }
    }
    return stats;
  }

  /** Region {@code regionId} from the map. */
  public RegionDescriptor region(long regionId) throws Exception {
    return regions()
        .byId(regionId)
        .orElseThrow(() -> new IllegalArgumentException("no region " + regionId));
  }

  private List<String> children(String path) throws Exception {
    try {
      return curator.getChildren().forPath(path);
    } catch (KeeperException.NoNodeException e) {
      return List.of();
    }
  }

  @Override
  public void close() {
    control.close();
    curator.close();
  }
}
