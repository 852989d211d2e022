package io.kvs.master.status;

import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.MasterAddress;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where masters serve their operator HTTP port: each publishes an ephemeral node {@code
 * master-http/<id>} ({@link ClusterPaths#masterHttp(String)}, JSON {@link MasterAddress}) while it
 * runs, so that tools and the other masters' status pages find it.
 */
public final class MasterAddresses {
  private static final Logger LOG = LoggerFactory.getLogger(MasterAddresses.class);

  private MasterAddresses() {}

  /**
   * Publishes {@code address} until the returned node is closed (re-created after a lost session).
   */
  public static PersistentNode publish(
      CuratorFramework curator, ClusterPaths paths, MasterAddress address) {
    PersistentNode node =
        new PersistentNode(
            curator,
            CreateMode.EPHEMERAL,
            false,
            paths.masterHttp(address.id()),
            ClusterJson.encode(address));
    node.start();
    return node;
  }

  /** The masters that publish their address, by id; a malformed node is logged and skipped. */
  public static List<MasterAddress> read(CuratorFramework curator, ClusterPaths paths)
      throws Exception {
    List<MasterAddress> masters = new ArrayList<>();
    List<String> children;
    try {
      children = curator.getChildren().forPath(paths.masterHttp());
    } catch (KeeperException.NoNodeException e) {
      return masters;
    }
    for (String child : children.stream().sorted().toList()) {
      try {
        masters.add(
            ClusterJson.decodeMasterAddress(curator.getData().forPath(paths.masterHttp(child))));
      } catch (KeeperException.NoNodeException e) {
        // gone meanwhile
      } catch (IllegalArgumentException e) {
        LOG.warn("ignoring a malformed master address at {}: {}", child, e.getMessage());
      }
    }
    return masters;
  }
}
