package io.kvs.core.cluster;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Reads many znodes at once rather than one round trip after another: the master's passes, the
 * status page and {@code ./kvs admin regions} read every region, and at 10,000 regions one by one
 * that took seconds (docs/BENCHMARKS.md, "master-scale").
 */
public final class ZooKeeperReads {
  /**
   * Reads in flight at most by default: ZooKeeper's own bound on requests outstanding (1,000 by
   * default) is where it starts throttling every client.
   */
  public static final int IN_FLIGHT = 500;

  /** Bound on waiting for one read's answer by default (Curator retries a lost connection). */
  public static final Duration TIMEOUT = Duration.ofSeconds(30);

  private ZooKeeperReads() {}

  /**
   * Reads the znodes {@code children} of {@code parent} in the background, at most {@code inFlight}
   * at a time, and hands each one's data and stat to {@code found} on this thread (one deleted
   * meanwhile is skipped). Returns once all are read; throws the first failure (after Curator's
   * retries) as the synchronous read would, or OPERATIONTIMEOUT when no answer came within {@code
   * timeout}.
   */
  public static void readAll(
      CuratorFramework curator,
      String parent,
      List<String> children,
      int inFlight,
      Duration timeout,
      BiConsumer<byte[], Stat> found)
      throws Exception {
    BlockingQueue<CuratorEvent> read = new ArrayBlockingQueue<>(inFlight);
    int sent = 0;
    int received = 0;
    KeeperException failure = null;
    while (received < children.size()) {
      while (sent < children.size() && sent - received < inFlight) {
        curator
            .getData()
            .inBackground((client, event) -> read.add(event))
            .forPath(parent + "/" + children.get(sent));
        sent++;
      }
      CuratorEvent event = read.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
      if (event == null) {
        throw KeeperException.create(KeeperException.Code.OPERATIONTIMEOUT, parent);
      }
      received++;
      KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
      if (code == KeeperException.Code.OK) {
        found.accept(event.getData(), event.getStat());
      } else if (code != KeeperException.Code.NONODE && failure == null) {
        failure = KeeperException.create(code, event.getPath());
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** {@link #readAll} with the default bounds. */
  public static void readAll(
      CuratorFramework curator,
      String parent,
      List<String> children,
      BiConsumer<byte[], Stat> found)
      throws Exception {
    readAll(curator, parent, children, IN_FLIGHT, TIMEOUT, found);
  }
}
