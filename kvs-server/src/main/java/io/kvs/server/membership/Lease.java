package io.kvs.server.membership;

import io.kvs.service.RegionService;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fence of this server's primaries (docs/ARCHITECTURE.md "Failure recovery"): they answer
 * clients only while a lease shorter than the ZooKeeper session holds. Every quarter of the session
 * timeout a round trip to ZooKeeper on this server's session renews it for three quarters of the
 * timeout, counted from when the round trip began: ZooKeeper can expire the session (and the master
 * act on it) no earlier than a full timeout after that, so a server paused, starved or cut off from
 * ZooKeeper stops answering before its regions can move. A session that expired (Curator reports it
 * lost, or the session changed under the lease) ends every region held here: the master has moved
 * on, and opens them again where they belong.
 */
public final class Lease implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Lease.class);

  private final CuratorFramework curator;
  private final String path;
  private final RegionService service;
  private final Duration requestedTimeout;
  private final Runnable onSessionLost;
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "kvs-lease");
            thread.setDaemon(true);
            return thread;
          });
  private long session; // timer thread only

  private Lease(
      CuratorFramework curator,
      String path,
      RegionService service,
      Duration sessionTimeout,
      Runnable onSessionLost) {
    this.curator = curator;
    this.path = path;
    this.service = service;
    this.requestedTimeout = sessionTimeout;
    this.onSessionLost = onSessionLost;
  }

  /**
   * Starts renewing the lease of {@code service}'s primaries through round trips on {@code path}
   * (this server's node); {@code onSessionLost} runs (on the lease's thread) when the session
   * expired.
   */
  public static Lease start(
      CuratorFramework curator,
      String path,
      RegionService service,
      Duration sessionTimeout,
      Runnable onSessionLost) {
    Lease lease = new Lease(curator, path, service, sessionTimeout, onSessionLost);
    lease.renew(); // a lease from the start, before any region is opened
    long period = Math.max(50, sessionTimeout.toMillis() / 4);
    lease.timer.scheduleWithFixedDelay(lease::renew, period, period, TimeUnit.MILLISECONDS);
    curator
        .getConnectionStateListenable()
        .addListener(
            (client, state) -> {
              if (state == ConnectionState.LOST) {
                lease.timer.execute(lease::sessionLost);
              }
            });
    return lease;
  }

  private void renew() {
    long started = System.nanoTime();
    try {
      ZooKeeper zookeeper = curator.getZookeeperClient().getZooKeeper();
      long before = zookeeper.getSessionId();
      curator.checkExists().forPath(path);
      long after = curator.getZookeeperClient().getZooKeeper().getSessionId();
      if (before != after || after == 0) {
        return; // reconnected meanwhile: not known to have held; the next renewal decides
      }
      if (session != 0 && after != session) {
        sessionLost(); // a new session: the one the regions were opened under expired
      }
      session = after;
      long timeout =
          Math.min(requestedTimeout.toMillis(), Math.max(1, zookeeper.getSessionTimeout()));
      long validity = TimeUnit.MILLISECONDS.toNanos(timeout) * 3 / 4;
      service.renewLease(started + validity - System.nanoTime());
    } catch (Exception e) {
      // Not renewed: the lease lapses on its own.
      LOG.debug("lease not renewed: {}", e.toString());
    }
  }

  private void sessionLost() {
    LOG.warn("ZooKeeper session lost: closing every region held here");
    service.renewLease(0);
    try {
      onSessionLost.run();
    } catch (RuntimeException e) {
      LOG.warn("closing the regions after a session loss failed: {}", e.toString());
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
