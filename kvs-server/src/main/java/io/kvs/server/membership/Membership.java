package io.kvs.server.membership;

import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.ServerInfo;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.zookeeper.CreateMode;

/**
 * This server's ephemeral node under {@link ClusterPaths#servers()}, kept by Curator's {@link
 * PersistentNode}: re-created after a session loss, removed when the server stops (or its session
 * expires, which is how the master learns it died). {@link #announce} rewrites it unchanged: the
 * master watches these nodes, so a write asks it for a pass now rather than at its next interval.
 */
public final class Membership implements AutoCloseable {
  private final PersistentNode node;

  private Membership(PersistentNode node) {
    this.node = node;
  }

  /** Registers {@code self}; returns once the node exists (or throws after {@code timeout}). */
  public static Membership register(
      CuratorFramework curator, ClusterPaths paths, ServerInfo self, Duration timeout)
      throws Exception {
    PersistentNode node =
        new PersistentNode(
            curator,
            CreateMode.EPHEMERAL,
            false,
            paths.server(self.id()),
            ClusterJson.encode(self));
    node.start();
    if (!node.waitForInitialCreate(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      node.close();
      throw new IllegalStateException(
          "could not register " + paths.server(self.id()) + " within " + timeout);
    }
    return new Membership(node);
  }

  /**
   * Asks the master for a pass now (something changed that its {@code list} reports: a replication
   * stream failed): the node is written again, unchanged, in the background.
   */
  public void announce() throws Exception {
    node.setData(node.getData());
  }

  @Override
  public void close() throws java.io.IOException {
    node.close();
  }
}
