package io.kvs.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.security.SecurityOptions;
import io.kvs.core.security.ZooKeeperAcls;
import io.kvs.core.security.ZooKeeperDigest;
import io.kvs.master.EmbeddedZooKeeper;
import io.kvs.master.Master;
import io.kvs.master.MasterOptions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With ZooKeeper digest credentials, a master and a server create the cluster's znodes so that
 * anyone can read them (clients route without credentials) but only the credentials' holders can
 * create, change or delete anything under the cluster root, paths added later included.
 */
class ZooKeeperAclTest {
  private static final ZooKeeperDigest DIGEST = new ZooKeeperDigest("kvs", "acl-test-password");
  private final ClusterPaths paths = new ClusterPaths("acl");

  @TempDir Path directory;
  private EmbeddedZooKeeper zookeeper;
  private RegionServer server;
  private Master master;
  private CuratorFramework stranger;
  private CuratorFramework admin;

  @BeforeEach
  void startCluster() throws Exception {
    zookeeper = EmbeddedZooKeeper.start(directory.resolve("zookeeper"), 0);
    SecurityOptions security = SecurityOptions.none().withZooKeeper(DIGEST);
    server =
        RegionServer.start(
            ServerOptions.builder("s1", directory.resolve("s1"), zookeeper.connectString())
                .cluster("acl")
                .memoryBudgetBytes(64L << 20)
                .security(security)
                .build());
    master =
        Master.start(
            new MasterOptions(
                    "m1",
                    zookeeper.connectString(),
                    "acl",
                    new ClusterConfig(2, 1, ReplicationMode.NONE, List.of()),
                    1,
                    Duration.ofMillis(200),
                    Duration.ofSeconds(10))
                .withSecurity(security));
    stranger = CuratorFrameworkFactory.newClient(zookeeper.connectString(), new RetryOneTime(100));
    stranger.start();
    admin =
        ZooKeeperAcls.apply(
                CuratorFrameworkFactory.builder()
                    .connectString(zookeeper.connectString())
                    .retryPolicy(new RetryOneTime(100)),
                Optional.of(DIGEST))
            .build();
    admin.start();
  }

  @AfterEach
  void stopCluster() throws Exception {
    stranger.close();
    admin.close();
    master.close();
    server.close();
    zookeeper.close();
  }

  @Test
  void strangersReadButCannotWriteWhileTheCredentialsHoldersCan() throws Exception {
    String region = awaitRegion();
    byte[] bytes = stranger.getData().forPath(region);
    assertThat(bytes).isNotEmpty();
    assertThat(stranger.getChildren().forPath(paths.servers())).contains("s1");

    byte[] junk = "junk".getBytes(StandardCharsets.UTF_8);
    assertThatThrownBy(() -> stranger.setData().forPath(region, junk))
        .isInstanceOf(KeeperException.NoAuthException.class);
    assertThatThrownBy(() -> stranger.delete().forPath(paths.server("s1")))
        .isInstanceOf(KeeperException.NoAuthException.class);
    assertThatThrownBy(() -> stranger.delete().forPath(paths.config()))
        .isInstanceOf(KeeperException.NoAuthException.class);
    assertThatThrownBy(() -> stranger.create().forPath(paths.root() + "/admin", junk))
        .isInstanceOf(KeeperException.NoAuthException.class);
    // Not "unchanged": the master may move the region on (OPENING to OPEN) meanwhile.
    assertThat(stranger.getData().forPath(region)).isNotEqualTo(junk);

    // The admin tool, holding the credentials, writes a new path under the root; strangers
    // still only read it.
    String move = paths.root() + "/admin/move-1";
    admin.create().creatingParentsIfNeeded().forPath(move, junk);
    assertThat(stranger.getData().forPath(move)).isEqualTo(junk);
    assertThatThrownBy(() -> stranger.delete().forPath(move))
        .isInstanceOf(KeeperException.NoAuthException.class);
    admin.delete().forPath(move);
    assertThat(admin.checkExists().forPath(move)).isNull();
  }

  private String awaitRegion() throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      if (stranger.checkExists().forPath(paths.regions()) != null) {
        List<String> children = stranger.getChildren().forPath(paths.regions());
        if (!children.isEmpty()) {
          return paths.regions() + "/" + children.get(0);
        }
      }
      assertThat(System.nanoTime()).as("no region appeared").isLessThan(deadline);
      Thread.onSpinWait();
    }
  }
}
