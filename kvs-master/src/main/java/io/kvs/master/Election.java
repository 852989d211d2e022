package io.kvs.master;

import java.io.IOException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.Participant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The masters' election (a Curator {@link LeaderLatch} under the cluster's masters path), and a
 * watch that this master stays in it. Curator's latch makes its node again after a lost session,
 * but not always: in the session-5 chaos profile a standby whose session expired in a machine stall
 * was missing from the election for 240 s (and no master could take over from the active one), as
 * Curator's own reports of reconnect races in the latch describe (CURATOR-498, CURATOR-644). So
 * {@link #check} runs periodically: a master connected to ZooKeeper whose node is missing at two
 * checks in a row closes its latch and joins the election with a new one.
 */
final class Election implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Election.class);

  /** Checks in a row that must find this master's node missing before it joins again. */
  private static final int MISSING_CHECKS = 2;

  private final CuratorFramework curator;
  private final String path;
  private final String id;
  private final LeaderLatchListener listener;
  private volatile LeaderLatch latch;
  private int missing; // check's thread only
  private int rejoined; // check's thread only

  Election(CuratorFramework curator, String path, String id, LeaderLatchListener listener) {
    this.curator = curator;
    this.path = path;
    this.id = id;
    this.listener = listener;
    this.latch = newLatch();
  }

  private LeaderLatch newLatch() {
    LeaderLatch created = new LeaderLatch(curator, path, id);
    created.addListener(listener);
    return created;
  }

  void start() throws Exception {
    latch.start();
  }

  boolean hasLeadership() {
    return latch.hasLeadership();
  }

  /**
   * This master's node in the election (ephemeral: it exists while this master's session does),
   * null before it is made. While it exists a master that led still leads: a write that checks it
   * in the same transaction is never made by a master that lost its leadership.
   */
  String ourPath() {
    return latch.getOurPath();
  }

  /** The elected master's id, empty if none is (the latch's first participant). */
  String leaderId() {
    try {
      Participant leader = latch.getLeader();
      return leader.isLeader() ? leader.getId() : "";
    } catch (Exception e) {
      return "";
    }
  }

  /** How often this master joined the election again with a new latch. */
  synchronized int rejoined() {
    return rejoined;
  }

  /**
   * Joins the election again if this master, connected to ZooKeeper, was missing from it at {@link
   * #MISSING_CHECKS} checks in a row. Call from one thread, periodically.
   */
  synchronized void check() {
    if (!curator.getZookeeperClient().isConnected()) {
      missing = 0; // the latch rejoins on reconnection; judged once connected
      return;
    }
    boolean present;
    try {
      present = latch.getParticipants().stream().anyMatch(p -> p.getId().equals(id));
    } catch (Exception e) {
      LOG.debug("cannot list the election's participants: {}", e.toString());
      return;
    }
    if (present) {
      missing = 0;
      return;
    }
    if (++missing < MISSING_CHECKS) {
      return;
    }
    LOG.warn("master {} is missing from the election; joining it again with a new latch", id);
    missing = 0;
    rejoined++;
    LeaderLatch old = latch;
    latch = newLatch();
    try {
      old.close(LeaderLatch.CloseMode.NOTIFY_LEADER);
    } catch (IOException | IllegalStateException e) {
      LOG.debug("closing the old latch: {}", e.toString());
    }
    try {
      latch.start();
    } catch (Exception e) {
      LOG.warn("cannot join the election again: {}", e.toString());
    }
  }

  @Override
  public synchronized void close() throws IOException {
    latch.close();
  }
}
