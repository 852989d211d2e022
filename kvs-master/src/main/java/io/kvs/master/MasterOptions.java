package io.kvs.master;

import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.security.SecurityOptions;
import java.time.Duration;
import java.util.Objects;

/**
 * How a master runs.
 *
 * @param id this master's name in the election
 * @param zookeeper ZooKeeper connect string
 * @param cluster cluster name
 * @param bootstrap the configuration a new cluster is created with (ignored once it exists)
 * @param expectedServers live servers the first assignment waits for, so regions spread over all of
 *     them (at least the replication factor)
 * @param reconcileInterval how often the active master re-checks every region even when nothing
 *     changed
 * @param controlTimeout bound on each control command to a region server
 * @param host the address its operator HTTP port listens on
 * @param httpPort the operator HTTP port (status page, {@code /metrics}, {@code /health}; 0: a free
 *     port)
 * @param security the cluster secret and TLS certificate its control commands carry, and its
 *     ZooKeeper credentials; none by default (docs/OPERATIONS.md, "Security")
 * @param sessionTimeout its ZooKeeper session timeout: how long a standby waits for an active
 *     master that stopped answering (paused, cut off, dead) before it takes over ({@link
 *     #DEFAULT_SESSION_TIMEOUT}, the region servers' default, by default)
 * @param balancer how it balances replicas and leadership by itself ({@link
 *     BalancerOptions#DEFAULT} by default)
 * @param split when it splits regions by itself ({@link SplitOptions#DEFAULT} by default)
 * @param merge when it merges regions by itself ({@link MergeOptions#DEFAULT} by default)
 */
public record MasterOptions(
    String id,
    String zookeeper,
    String cluster,
    ClusterConfig bootstrap,
    int expectedServers,
    Duration reconcileInterval,
    Duration controlTimeout,
    String host,
    int httpPort,
    SecurityOptions security,
    Duration sessionTimeout,
    BalancerOptions balancer,
    SplitOptions split,
    MergeOptions merge) {
  /** A master's ZooKeeper session timeout unless given: the region servers' default. */
  public static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(4);

  public MasterOptions {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(zookeeper, "zookeeper");
    Objects.requireNonNull(bootstrap, "bootstrap");
    cluster = cluster == null ? "default" : cluster;
    expectedServers = Math.max(expectedServers, bootstrap.replicationFactor());
    reconcileInterval = reconcileInterval == null ? Duration.ofSeconds(2) : reconcileInterval;
    controlTimeout = controlTimeout == null ? Duration.ofSeconds(30) : controlTimeout;
    host = host == null ? "127.0.0.1" : host;
    security = security == null ? SecurityOptions.none() : security;
    sessionTimeout = sessionTimeout == null ? DEFAULT_SESSION_TIMEOUT : sessionTimeout;
    balancer = balancer == null ? BalancerOptions.DEFAULT : balancer;
    split = split == null ? SplitOptions.DEFAULT : split;
    merge = merge == null ? MergeOptions.DEFAULT : merge;
  }

  /** Options with the default merges. */
  public MasterOptions(
      String id,
      String zookeeper,
      String cluster,
      ClusterConfig bootstrap,
      int expectedServers,
      Duration reconcileInterval,
      Duration controlTimeout,
      String host,
      int httpPort,
      SecurityOptions security,
      Duration sessionTimeout,
      BalancerOptions balancer,
      SplitOptions split) {
    this(
        id,
        zookeeper,
        cluster,
        bootstrap,
        expectedServers,
        reconcileInterval,
        controlTimeout,
        host,
        httpPort,
        security,
        sessionTimeout,
        balancer,
        split,
        null);
  }

  /** Options with the default splits. */
  public MasterOptions(
      String id,
      String zookeeper,
      String cluster,
      ClusterConfig bootstrap,
      int expectedServers,
      Duration reconcileInterval,
      Duration controlTimeout,
      String host,
      int httpPort,
      SecurityOptions security,
      Duration sessionTimeout,
      BalancerOptions balancer) {
    this(
        id,
        zookeeper,
        cluster,
        bootstrap,
        expectedServers,
        reconcileInterval,
        controlTimeout,
        host,
        httpPort,
        security,
        sessionTimeout,
        balancer,
        (SplitOptions) null);
  }

  /** Options with the default balancer. */
  public MasterOptions(
      String id,
      String zookeeper,
      String cluster,
      ClusterConfig bootstrap,
      int expectedServers,
      Duration reconcileInterval,
      Duration controlTimeout,
      String host,
      int httpPort,
      SecurityOptions security,
      Duration sessionTimeout) {
    this(
        id,
        zookeeper,
        cluster,
        bootstrap,
        expectedServers,
        reconcileInterval,
        controlTimeout,
        host,
        httpPort,
        security,
        sessionTimeout,
        null);
  }

  /** Options with the default session timeout. */
  public MasterOptions(
      String id,
      String zookeeper,
      String cluster,
      ClusterConfig bootstrap,
      int expectedServers,
      Duration reconcileInterval,
      Duration controlTimeout,
      String host,
      int httpPort,
      SecurityOptions security) {
    this(
        id,
        zookeeper,
        cluster,
        bootstrap,
        expectedServers,
        reconcileInterval,
        controlTimeout,
        host,
        httpPort,
        security,
        null);
  }

  /** These options with {@code newSecurity}. */
  public MasterOptions withSecurity(SecurityOptions newSecurity) {
    return new MasterOptions(
        id,
        zookeeper,
        cluster,
        bootstrap,
        expectedServers,
        reconcileInterval,
        controlTimeout,
        host,
        httpPort,
        newSecurity,
        sessionTimeout,
        balancer,
        split,
        merge);
  }

  /** These options with {@code newBalancer}. */
  public MasterOptions withBalancer(BalancerOptions newBalancer) {
    return new MasterOptions(
        id,
        zookeeper,
        cluster,
        bootstrap,
        expectedServers,
        reconcileInterval,
        controlTimeout,
        host,
        httpPort,
        security,
        sessionTimeout,
        newBalancer,
        split,
        merge);
  }

  /** These options with {@code newMerge}. */
  public MasterOptions withMerge(MergeOptions newMerge) {
    return new MasterOptions(
        id,
        zookeeper,
        cluster,
        bootstrap,
        expectedServers,
        reconcileInterval,
        controlTimeout,
        host,
        httpPort,
        security,
        sessionTimeout,
        balancer,
        split,
        newMerge);
  }

  /** These options with {@code newSplit}. */
  public MasterOptions withSplit(SplitOptions newSplit) {
    return new MasterOptions(
        id,
        zookeeper,
        cluster,
        bootstrap,
        expectedServers,
        reconcileInterval,
        controlTimeout,
        host,
        httpPort,
        security,
        sessionTimeout,
        balancer,
        newSplit,
        merge);
  }

  /** Options with the HTTP port on a free port of 127.0.0.1, without security. */
  public MasterOptions(
      String id,
      String zookeeper,
      String cluster,
      ClusterConfig bootstrap,
      int expectedServers,
      Duration reconcileInterval,
      Duration controlTimeout) {
    this(
        id,
        zookeeper,
        cluster,
        bootstrap,
        expectedServers,
        reconcileInterval,
        controlTimeout,
        "127.0.0.1",
        0,
        SecurityOptions.none());
  }
}
