package io.kvs.master;

import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlReply;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Prepares each planned handover of a region's leadership (an operator's move, a decommission's
 * drain, the balancer's) before the master writes it, under send-index: the primary is first told
 * to merge its in-memory level into its levels while it still serves ({@link
 * ControlCommand.PrepareHandover}), which ships the index to its backups, so that the backup
 * promoted replays only the writes made since instead of everything since the last merge (tens of
 * thousands of writes, 200+ ms of unavailability, in the elastic benchmark). The handover decided
 * is kept as it was decided and written in the first pass after the reply, whatever the reply (a
 * preparation refused or timed out costs only the replay it would have saved).
 *
 * <p>While a region's handover is being prepared the reconciler plans nothing else for it; failure
 * recovery's rules come first as always, and a region whose epoch moved meanwhile drops its
 * handover (planned again by whoever planned it, if still wanted). Bounded: one preparation per
 * region, each bounded by {@link #PREPARE_TIMEOUT}. Pass thread only.
 */
final class Handovers {
  private static final Logger LOG = LoggerFactory.getLogger(Handovers.class);

  /**
   * How long the master waits for a preparation's reply at most: the server's own wait for its
   * merge (2 s) and the command's time in the server's lanes.
   */
  static final Duration PREPARE_TIMEOUT = Duration.ofSeconds(5);

  private final ServerCommands commands;
  private final Runnable passWanted;

  /** A handover decided for a region at an epoch, and its preparation's reply. */
  private record Preparing(
      long epoch, RegionDescriptor next, CompletableFuture<ControlReply> reply, long sentAt) {}

  private final Map<Long, Preparing> preparing = new HashMap<>();

  Handovers(ServerCommands commands, Runnable passWanted) {
    this.commands = commands;
    this.passWanted = passWanted;
  }

  /**
   * Starts preparing {@code next}, decided for {@code region}, if it hands the region's leadership
   * over in a way worth preparing (an open region under send-index; under build-index each backup
   * keeps an in-memory level of its own, so a promotion replays nothing): its primary is asked to
   * merge ahead, and {@code next} is written once it answered ({@link #take}). Whether it started;
   * if not, the caller writes {@code next} now.
   */
  boolean preparesFirst(
      RegionDescriptor region,
      RegionDescriptor next,
      Map<String, ServerInfo> servers,
      ClusterConfig config) {
    if (config.mode() != ReplicationMode.SEND_INDEX
        || region.state() != RegionState.OPEN
        || region.primary().isEmpty()
        || next.primary().equals(region.primary())) {
      return false;
    }
    ServerInfo primary = servers.get(region.primary());
    CompletableFuture<ControlReply> reply =
        primary == null
            ? CompletableFuture.completedFuture(
                ControlReply.failed(StatusCode.IO_ERROR, "its primary is not listed"))
            : commands.send(
                primary,
                new ControlCommand.PrepareHandover(region.id(), region.epoch()),
                PREPARE_TIMEOUT);
    preparing.put(region.id(), new Preparing(region.epoch(), next, reply, System.nanoTime()));
    reply.whenComplete((r, e) -> passWanted.run());
    LOG.info("{}: preparing its handover to {}", region, next.primary());
    return true;
  }

  /**
   * Whether {@code region} (as read this pass) has a handover being prepared or prepared; one
   * decided at another epoch is dropped (the region moved on).
   */
  boolean preparing(RegionDescriptor region) {
    Preparing prepared = preparing.get(region.id());
    if (prepared != null && prepared.epoch() != region.epoch()) {
      preparing.remove(region.id());
      prepared.reply().cancel(false);
      LOG.info("region {}: handover to {} dropped: it moved on", region.id(), prepared.next());
      return false;
    }
    return prepared != null;
  }

  /** Whether region {@code regionId} has a handover being prepared (split and merge wait). */
  boolean preparing(long regionId) {
    return preparing.containsKey(regionId);
  }

  /**
   * The handover prepared for {@code region} (which {@link #preparing} says has one), once its
   * preparation answered; null while it is still on its way.
   */
  RegionDescriptor take(RegionDescriptor region) {
    Preparing prepared = preparing.get(region.id());
    if (prepared == null || !prepared.reply().isDone()) {
      return null;
    }
    preparing.remove(region.id());
    ControlReply reply =
        prepared
            .reply()
            .exceptionally(e -> ControlReply.failed(StatusCode.IO_ERROR, String.valueOf(e)))
            .join();
    long millis = (System.nanoTime() - prepared.sentAt()) / 1_000_000;
    if (reply.isOk()) {
      LOG.info(
          "region {}: prepared for its handover in {} ms ({} KiB in memory, {})",
          region.id(),
          millis,
          reply.stats().getOrDefault("l0Bytes", 0L) >> 10,
          reply.stats().getOrDefault("merged", 0L) == 1 ? "merged" : "not all merged");
    } else {
      LOG.info(
          "region {}: its primary did not prepare for its handover ({} ms): {}; handed over anyway",
          region.id(),
          millis,
          reply.message());
    }
    return prepared.next();
  }

  /** Forgets the handovers of regions not in {@code ids} (split, merged). */
  void retain(Set<Long> ids) {
    preparing.keySet().retainAll(ids);
  }
}
