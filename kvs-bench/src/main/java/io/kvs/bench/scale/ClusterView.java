package io.kvs.bench.scale;

import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.cluster.RegionState;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/**
 * The region map as ZooKeeper holds it, read by the simulation's own checks: every region's znode
 * at once (background reads, so thousands take one round trip's wait, not thousands), with the
 * number of times each was written (its znode version).
 */
public final class ClusterView {
  /** A region and its znode's version: how many times it was written since it was created. */
  public record Versioned(RegionDescriptor region, int version) {}

  private final CuratorFramework curator;
  private final ClusterPaths paths;

  public ClusterView(CuratorFramework curator, String cluster) {
    this.curator = curator;
    this.paths = new ClusterPaths(cluster);
  }

  /** Every region now, by id (empty before the cluster exists). */
  public Map<Long, Versioned> regions() throws Exception {
    List<String> children;
    try {
      children = curator.getChildren().forPath(paths.regions());
    } catch (KeeperException.NoNodeException e) {
      return Map.of();
    }
    Map<Long, Versioned> regions = new ConcurrentHashMap<>();
    CountDownLatch done = new CountDownLatch(children.size());
    for (String child : children) {
      curator
          .getData()
          .inBackground(
              (client, event) -> {
                try {
                  if (event.getResultCode() == KeeperException.Code.OK.intValue()) {
                    RegionDescriptor region = ClusterJson.decodeRegion(event.getData());
                    regions.put(region.id(), new Versioned(region, event.getStat().getVersion()));
                  }
                } finally {
                  done.countDown();
                }
              })
          .forPath(paths.regions() + "/" + child);
    }
    if (!done.await(60, TimeUnit.SECONDS)) {
      throw new IllegalStateException("reading " + children.size() + " regions took over 60 s");
    }
    return regions;
  }

  /**
   * Whether every region is settled: OPEN, with {@code replication} members of which none is
   * joining nor in {@code dead}, and (if {@code cluster} is given) each member holding it at its
   * epoch in its role.
   */
  public static boolean settled(
      Map<Long, Versioned> regions, int replication, List<String> dead, SimulatedCluster cluster) {
    if (regions.isEmpty()) {
      return false;
    }
    for (Versioned versioned : regions.values()) {
      RegionDescriptor region = versioned.region();
      if (region.state() != RegionState.OPEN
          || !region.joining().isEmpty()
          || region.members().size() != replication
          || region.members().stream().anyMatch(dead::contains)) {
        return false;
      }
      if (cluster == null) {
        continue;
      }
      for (String member : region.members()) {
        SimulatedRegions.Held held = cluster.server(member).regions().holding(region.id());
        RegionRole role = region.roleOf(member);
        if (held == null || held.role() != role || held.descriptor().epoch() != region.epoch()) {
          return false;
        }
      }
    }
    return true;
  }

  /** Writes to region znodes so far: the sum of their versions. */
  public static long writes(Map<Long, Versioned> regions) {
    return regions.values().stream().mapToLong(Versioned::version).sum();
  }
}
