package io.kvs.server.membership;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.engine.Engine;
import io.kvs.engine.EngineOptions;
import io.kvs.master.EmbeddedZooKeeper;
import io.kvs.service.RegionService;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A session that expires is acted on once, with its id, however the lease learns of it (Curator's
 * report and the next renewal both see it), and the session that follows is not taken for lost: its
 * regions stay. Before, the renewal that first met the new session closed every region again, those
 * the master had opened under the new session included.
 */
class LeaseTest {
  private static final Duration SESSION = Duration.ofMillis(2_000);

  @TempDir Path directory;

  @Test
  void anExpiredSessionIsActedOnOnceAndTheNextIsNotTakenForLost() throws Exception {
    try (EmbeddedZooKeeper zookeeper = EmbeddedZooKeeper.start(directory.resolve("zk"), 0);
        Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create(engine);
        CuratorFramework curator =
            CuratorFrameworkFactory.newClient(
                zookeeper.connectString(),
                (int) SESSION.toMillis(),
                10_000,
                new RetryOneTime(100))) {
      curator.start();
      assertThat(curator.blockUntilConnected(30, TimeUnit.SECONDS)).isTrue();
      curator.create().forPath("/s1");
      List<Long> lost = new CopyOnWriteArrayList<>();
      Lease lease = Lease.start(curator, "/s1", service, SESSION, lost::add);
      try {
        long first = curator.getZookeeperClient().getZooKeeper().getSessionId();
        expire(zookeeper.connectString(), curator.getZookeeperClient().getZooKeeper());
        await(() -> lost.contains(first), "the expired session acted on");
        await(() -> sessionOf(curator) != first && sessionOf(curator) != 0, "a new session");
        // What must not happen can only be waited out: three renewals (every quarter of the
        // session timeout) under the new session.
        Thread.sleep(SESSION.toMillis() * 3 / 4 + 100);
        assertThat(lost).as("sessions acted on").containsExactly(first);
      } finally {
        lease.close();
      }
    }
  }

  /**
   * Expires {@code client}'s session: a second client on it closes it, as ZooKeeper's own tests do.
   */
  private static void expire(String connect, ZooKeeper client) throws Exception {
    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper twin =
        new ZooKeeper(
            connect,
            (int) SESSION.toMillis(),
            event -> {
              if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
              }
            },
            client.getSessionId(),
            client.getSessionPasswd());
    assertThat(connected.await(30, TimeUnit.SECONDS)).isTrue();
    twin.close();
  }

  private static long sessionOf(CuratorFramework curator) {
    try {
      return curator.getZookeeperClient().getZooKeeper().getSessionId();
    } catch (Exception e) {
      return 0;
    }
  }

  private static void await(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime() - deadline).as("not within 30 s: " + what).isNegative();
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // polls the condition
    }
  }
}
