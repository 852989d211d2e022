package io.kvs.master;

import io.kvs.core.KvsException;
import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.ControlClient;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlReply;
import io.kvs.core.control.HeldRegion;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pass of the active master over the cluster: bootstrap if there is no cluster yet, then bring
 * every region to where the map says it is. Level-triggered: it compares what the map records with
 * what each live server reports holding, so a pass after any failure (its own included) repairs
 * what the previous one left.
 *
 * <p>Rules (until failure recovery moves replicas): a region is OPEN when every member of its
 * replica group is live and holds it at its epoch. When a member is gone the region goes OFFLINE at
 * a raised epoch and the remaining members are told to close it (fencing: they refuse the old
 * epoch); when all members are back it is reopened at a raised epoch, backups first. An OPEN region
 * that a live member no longer holds as the map says (it restarted before its old session expired)
 * is reopened at a raised epoch too, so its primary replicates to it afresh.
 */
final class Reconciler {
  private static final Logger LOG = LoggerFactory.getLogger(Reconciler.class);

  private final MasterOptions options;
  private final RegionStore store;
  private final ControlClient control;

  Reconciler(MasterOptions options, RegionStore store, ControlClient control) {
    this.options = options;
    this.store = store;
    this.control = control;
  }

  /** Whether everything is OPEN after this pass. */
  boolean pass() throws Exception {
    Map<String, ServerInfo> servers = store.servers();
    ClusterConfig config = store.config().orElse(null);
    if (config == null) {
      return bootstrap(servers);
    }
    // Servers whose list failed are absent: what they hold is unknown this pass.
    Map<String, Map<Long, HeldRegion>> held = new HashMap<>();
    for (ServerInfo server : servers.values()) {
      Map<Long, HeldRegion> regions = heldBy(server);
      if (regions != null) {
        held.put(server.id(), regions);
      }
    }
    boolean allOpen = true;
    for (RegionStore.Versioned versioned : store.regions().values()) {
      try {
        allOpen &= reconcile(versioned, servers, held, config);
      } catch (KeeperException.BadVersionException e) {
        LOG.info("region {} changed meanwhile; next pass", versioned.region().id());
        allOpen = false;
      }
    }
    return allOpen;
  }

  private boolean bootstrap(Map<String, ServerInfo> servers) throws Exception {
    if (servers.size() < options.expectedServers()) {
      LOG.info(
          "waiting for {} servers before creating the cluster ({} live)",
          options.expectedServers(),
          servers.size());
      return false;
    }
    ClusterConfig config = options.bootstrap();
    Assignment assignment = new Assignment(new ArrayList<>(servers.keySet()));
    List<byte[]> splits = config.effectiveSplits();
    List<RegionDescriptor> regions = new ArrayList<>();
    for (int i = 0; i < config.regions(); i++) {
      byte[] start = i == 0 ? new byte[0] : splits.get(i - 1);
      byte[] end = i == config.regions() - 1 ? new byte[0] : splits.get(i);
      Assignment.Group group = assignment.next(config.replicationFactor());
      regions.add(
          new RegionDescriptor(
              i + 1, start, end, group.primary(), group.backups(), 1, RegionState.OPENING));
    }
    try {
      store.createCluster(config, regions);
      LOG.info(
          "created cluster {}: {} regions, replication {} ({}) over {}",
          options.cluster(),
          config.regions(),
          config.replicationFactor(),
          config.mode().configName(),
          servers.keySet());
    } catch (KeeperException.NodeExistsException e) {
      LOG.info("the cluster was created meanwhile");
    }
    return false;
  }

  private boolean reconcile(
      RegionStore.Versioned versioned,
      Map<String, ServerInfo> servers,
      Map<String, Map<Long, HeldRegion>> held,
      ClusterConfig config)
      throws Exception {
    RegionDescriptor region = versioned.region();
    int version = versioned.version();
    List<String> missing = new ArrayList<>();
    for (String member : region.members()) {
      if (!servers.containsKey(member)) {
        missing.add(member);
      }
    }
    if (region.primary().isEmpty() || !missing.isEmpty()) {
      if (region.state() != RegionState.OFFLINE) {
        RegionDescriptor offline =
            region.reassigned(region.primary(), region.backups()).withState(RegionState.OFFLINE);
        store.update(offline, version);
        LOG.warn("{} offline: members {} are gone", offline, missing);
        for (String member : region.members()) {
          if (servers.containsKey(member)) {
            send(servers.get(member), new ControlCommand.Close(region.id(), offline.epoch()));
          }
        }
      }
      return false;
    }
    if (region.state() == RegionState.OFFLINE) {
      RegionDescriptor reopening = region.reassigned(region.primary(), region.backups());
      version = store.update(reopening, version);
      region = reopening;
    } else if (region.state() == RegionState.OPEN && lostByAMember(region, held)) {
      // A live member no longer holds the region as the map says (it restarted before its old
      // session expired, or closed the region): the primary's replication stream to it is broken,
      // so the whole group is reopened at a raised epoch, and the primary replicates to it afresh.
      RegionDescriptor reopening = region.reassigned(region.primary(), region.backups());
      version = store.update(reopening, version);
      LOG.warn("{} reopened at a raised epoch: a member lost it", reopening);
      region = reopening;
    }
    boolean opened = true;
    // Backups first, so the primary finds them ready when it starts replicating.
    List<String> order = new ArrayList<>(region.backups());
    order.add(region.primary());
    for (String member : order) {
      HeldRegion holds = held.getOrDefault(member, Map.of()).get(region.id());
      RegionRole role = region.roleOf(member);
      if (holds != null && holds.epoch() == region.epoch() && holds.role() == role) {
        continue;
      }
      opened &= send(servers.get(member), new ControlCommand.Open(region, config.mode()));
    }
    if (opened && region.state() != RegionState.OPEN) {
      store.update(region.withState(RegionState.OPEN), version);
      LOG.info(
          "region {} [{}, {}) open at epoch {} on {}",
          region.id(),
          Keys.print(region.start()),
          Keys.print(region.end()),
          region.epoch(),
          region.members());
    }
    return opened;
  }

  /**
   * Whether a member whose regions were listed this pass does not hold {@code region} at its epoch
   * in its role; members that could not be listed count as holding it (nothing is known).
   */
  private static boolean lostByAMember(
      RegionDescriptor region, Map<String, Map<Long, HeldRegion>> held) {
    for (String member : region.members()) {
      Map<Long, HeldRegion> regions = held.get(member);
      if (regions == null) {
        continue;
      }
      HeldRegion holds = regions.get(region.id());
      if (holds == null
          || holds.epoch() != region.epoch()
          || holds.role() != region.roleOf(member)) {
        return true;
      }
    }
    return false;
  }

  /** What {@code server} holds, or null if it could not be asked. */
  private Map<Long, HeldRegion> heldBy(ServerInfo server) {
    Map<Long, HeldRegion> regions = new HashMap<>();
    try {
      ControlReply reply =
          control.call(server.host(), server.controlPort(), new ControlCommand.ListRegions());
      reply.regions().forEach(region -> regions.put(region.regionId(), region));
    } catch (KvsException e) {
      LOG.warn("cannot list the regions of {}: {}", server.id(), e.getMessage());
      return null;
    }
    return regions;
  }

  private boolean send(ServerInfo server, ControlCommand command) {
    try {
      ControlReply reply = control.call(server.host(), server.controlPort(), command);
      if (!reply.isOk()) {
        LOG.warn("{} refused {}: {} {}", server.id(), command, reply.status(), reply.message());
      }
      return reply.isOk();
    } catch (KvsException e) {
      LOG.warn("{} to {} failed: {}", command, server.id(), e.getMessage());
      return false;
    }
  }
}
