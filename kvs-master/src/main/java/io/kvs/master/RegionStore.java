package io.kvs.master;

import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.ServerInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The master's reads and writes of cluster metadata. Every change is conditional: regions are
 * replaced only at the version read ({@link KeeperException.BadVersionException} otherwise), and
 * the cluster is created in one transaction, so two masters can never both apply a change.
 */
final class RegionStore {
  /** A region and the znode version it was read at. */
  record Versioned(RegionDescriptor region, int version) {}

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

  /** Every region with its version, by id. */
  Map<Long, Versioned> regions() throws Exception {
    Map<Long, Versioned> regions = new TreeMap<>();
    List<String> children;
    try {
      children = curator.getChildren().forPath(paths.regions());
    } catch (KeeperException.NoNodeException e) {
      return regions;
    }
    for (String child : children) {
      Stat stat = new Stat();
      try {
        byte[] data = curator.getData().storingStatIn(stat).forPath(paths.regions() + "/" + child);
        RegionDescriptor region = ClusterJson.decodeRegion(data);
        regions.put(region.id(), new Versioned(region, stat.getVersion()));
      } catch (KeeperException.NoNodeException e) {
        // removed meanwhile
      }
    }
    return regions;
  }

  /** Live servers by id. */
  Map<String, ServerInfo> servers() throws Exception {
    Map<String, ServerInfo> servers = new TreeMap<>();
    List<String> children;
    try {
      children = curator.getChildren().forPath(paths.servers());
    } catch (KeeperException.NoNodeException e) {
      return servers;
    }
    for (String child : children) {
      try {
        ServerInfo info = ClusterJson.decodeServer(curator.getData().forPath(paths.server(child)));
        servers.put(info.id(), info);
      } catch (KeeperException.NoNodeException e) {
        // gone meanwhile
      }
    }
    return servers;
  }

  /** Creates the config and every region in one transaction (fails if any exists). */
  void createCluster(ClusterConfig config, List<RegionDescriptor> regions) throws Exception {
    ensurePath(paths.root());
    List<CuratorOp> ops = new ArrayList<>();
    ops.add(
        curator
            .transactionOp()
            .create()
            .withMode(CreateMode.PERSISTENT)
            .forPath(paths.config(), ClusterJson.encode(config)));
    ops.add(curator.transactionOp().create().forPath(paths.regions()));
    for (RegionDescriptor region : regions) {
      ops.add(
          curator
              .transactionOp()
              .create()
              .withMode(CreateMode.PERSISTENT)
              .forPath(paths.region(region.id()), ClusterJson.encode(region)));
    }
    curator.transaction().forOperations(ops);
  }

  /** Replaces a region at the version it was read at; the new version. */
  int update(RegionDescriptor region, int version) throws Exception {
    return curator
        .setData()
        .withVersion(version)
        .forPath(paths.region(region.id()), ClusterJson.encode(region))
        .getVersion();
  }

  void ensurePath(String path) throws Exception {
    try {
      curator.create().creatingParentsIfNeeded().forPath(path);
    } catch (KeeperException.NodeExistsException e) {
      // there already
    }
  }
}
