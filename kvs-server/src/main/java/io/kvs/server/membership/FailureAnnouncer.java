package io.kvs.server.membership;

import io.kvs.service.RegionService;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the master at once when one of this server's replication streams fails (a backup cut off or
 * stalled past the stall timeout): it looks at the service's count of failed streams every {@link
 * #PERIOD} and, when it changed, announces the server ({@link Membership#announce}), which asks the
 * master for a pass. Without it the master finds the failure at its next pass (every 2 s), which
 * the region, its writes waiting for the failed backup, spends unavailable. At most one ZooKeeper
 * write per period, only after a failure.
 */
public final class FailureAnnouncer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FailureAnnouncer.class);

  /** How often the count is looked at: a small part of the 2 s stall timeout. */
  static final Duration PERIOD = Duration.ofMillis(100);

  private final RegionService service;
  private final Membership membership;
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "kvs-failure-announcer");
            thread.setDaemon(true);
            return thread;
          });
  private long seen;

  private FailureAnnouncer(RegionService service, Membership membership) {
    this.service = service;
    this.membership = membership;
    this.seen = service.replicationStats().streamFailures();
  }

  /** Starts watching {@code service}'s streams for {@code membership}'s server. */
  public static FailureAnnouncer start(RegionService service, Membership membership) {
    FailureAnnouncer announcer = new FailureAnnouncer(service, membership);
    announcer.timer.scheduleWithFixedDelay(
        announcer::look, PERIOD.toMillis(), PERIOD.toMillis(), TimeUnit.MILLISECONDS);
    return announcer;
  }

  private void look() {
    try {
      long failures = service.replicationStats().streamFailures();
      if (failures == seen) {
        return;
      }
      seen = failures;
      membership.announce();
    } catch (Exception e) { // closing, or ZooKeeper unreachable: the master's own pass still comes
      LOG.debug("cannot announce a failed stream: {}", e.toString());
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
