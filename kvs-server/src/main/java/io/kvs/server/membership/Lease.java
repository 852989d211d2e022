package io.kvs.server.membership;

import io.kvs.service.RegionService;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
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
 * lost, or the session changed under the lease) ends every region opened here under it: the master
 * has moved on, and opens them again where they belong. Regions the master opened here under the
 * new session stay (Curator registers this server again as soon as it has one, which may be before
 * the loss is acted on); a loss seen both ways is acted on once.
 */
public final class Lease implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Lease.class);

  private final CuratorFramework curator;
  private final String path;
  private final RegionService service;
  private final Duration requestedTimeout;
  private final LongConsumer onSessionLost;
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "kvs-lease");
            thread.setDaemon(true);
            return thread;
          });
  private long session; // timer thread only: the session renewed last
  private long lost; // timer thread only: the last session whose loss was acted on

  private Lease(
      CuratorFramework curator,
      String path,
      RegionService service,
      Duration sessionTimeout,
      LongConsumer onSessionLost) {
    this.curator = curator;
    this.path = path;
    this.service = service;
    this.requestedTimeout = sessionTimeout;
    this.onSessionLost = onSessionLost;
  }

  /**
   * Starts renewing the lease of {@code service}'s primaries through round trips on {@code path}
   * (this server's node); {@code onSessionLost} runs (on the lease's thread) with the id of a
   * session that expired, once per session.
   */
  public static Lease start(
      CuratorFramework curator,
      String path,
      RegionService service,
      Duration sessionTimeout,
      LongConsumer onSessionLost) {
    Lease lease = new Lease(curator, path, service, sessionTimeout, onSessionLost);
    lease.renew(); // a lease from the start, before any region is opened
    long period = Math.max(50, sessionTimeout.toMillis() / 4);
    lease.timer.scheduleWithFixedDelay(lease::renew, period, period, TimeUnit.MILLISECONDS);
    curator
        .getConnectionStateListenable()
        .addListener(
            (client, state) -> {
              if (state == ConnectionState.LOST) {
                lease.timer.execute(lease::lostReported);
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
        sessionLost(session); // a new session: the one renewed before expired
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

  /**
   * Curator reports the session lost: the one renewed last, unless a renewal met the new session
   * first (and acted on the loss then), or the client has not left it yet (the next renewal that
   * meets another session acts).
   */
  private void lostReported() {
    long now = 0;
    try {
      now = curator.getZookeeperClient().getZooKeeper().getSessionId();
    } catch (Exception e) {
      // no client now: the session renewed last is gone
    }
    if (now != session) {
      sessionLost(session);
    }
  }

  private void sessionLost(long expired) {
    if (expired == 0 || expired == lost) {
      return; // acted on already (Curator's report and a renewal both saw it)
    }
    lost = expired;
    LOG.warn(
        "ZooKeeper session 0x{} lost: closing every region opened here under it",
        Long.toHexString(expired));
    service.renewLease(0);
    try {
      onSessionLost.accept(expired);
    } catch (RuntimeException e) {
      LOG.warn("closing the regions after a session loss failed: {}", e.toString());
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
