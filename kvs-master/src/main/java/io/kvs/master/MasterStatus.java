package io.kvs.master;

import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.MasterAddress;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.ControlClient;
import io.kvs.core.http.HttpEndpoint;
import io.kvs.master.status.ClusterSnapshot;
import io.kvs.master.status.MasterAddresses;
import io.kvs.master.status.RecoveryLog;
import io.kvs.master.status.ServerProbe;
import io.kvs.master.status.StatusPage;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A master's status page (active or standby alike, read from ZooKeeper through the {@link
 * RegionStore}, and what servers answer through a {@link ServerProbe}), and the ephemeral node
 * {@code master-http/<id>} that publishes where it is served, so that tools and the other masters'
 * pages find it.
 */
final class MasterStatus implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MasterStatus.class);

  /** How long what a server answered is shown before it is asked again. */
  static final Duration PROBE_MAX_AGE = Duration.ofSeconds(2);

  /** How long a request of the page waits for servers' answers (a call's bound, and a little). */
  static final Duration PROBE_WAIT = Reconciler.LIST_TIMEOUT.plusMillis(500);

  private final MasterOptions options;
  private final CuratorFramework curator;
  private final ClusterPaths paths;
  private final RegionStore store;
  private final Election election;
  private final RecoveryLog recoveries;
  private final BooleanSupplier converged;
  private final ServerProbe probe;
  private final PersistentNode published;

  MasterStatus(
      MasterOptions options,
      CuratorFramework curator,
      RegionStore store,
      Election election,
      RecoveryLog recoveries,
      BooleanSupplier converged,
      ControlClient control,
      HttpEndpoint http) {
    this.options = options;
    this.curator = curator;
    this.paths = new ClusterPaths(options.cluster());
    this.store = store;
    this.election = election;
    this.recoveries = recoveries;
    this.converged = converged;
    this.probe = new ServerProbe(control, Reconciler.LIST_TIMEOUT, PROBE_MAX_AGE);
    StatusPage.serve(http, this::snapshot);
    MasterAddress address = new MasterAddress(options.id(), options.host(), http.port());
    published = MasterAddresses.publish(curator, paths, address);
    LOG.info("status page at {}", address.url("/status"));
  }

  ClusterSnapshot snapshot() throws Exception {
    Map<String, ServerInfo> servers = store.servers();
    List<RegionDescriptor> regions =
        store.regions().values().stream().map(RegionStore.Versioned::region).toList();
    boolean active = election.hasLeadership();
    return new ClusterSnapshot(
        options.cluster(),
        store.config(),
        regions,
        servers,
        probe.probeAll(servers.values(), PROBE_WAIT),
        options.id(),
        active,
        active ? options.id() : activeMasterId(),
        active && converged.getAsBoolean(),
        MasterAddresses.read(curator, paths),
        recoveries.recent(),
        store.decommissioned(),
        System.currentTimeMillis());
  }

  /** The elected master's id, empty if none is. */
  private String activeMasterId() {
    return election.leaderId();
  }

  @Override
  public void close() throws java.io.IOException {
    published.close();
    probe.close();
  }
}
