package io.kvs.server;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.http.HttpEndpoint;
import io.kvs.core.metrics.ProcessMetrics;
import io.kvs.core.security.ZooKeeperAcls;
import io.kvs.engine.Engine;
import io.kvs.engine.EngineOptions;
import io.kvs.fabric.FabricOptions;
import io.kvs.fabric.FabricServer;
import io.kvs.server.control.ControlServer;
import io.kvs.server.membership.FailureAnnouncer;
import io.kvs.server.membership.Lease;
import io.kvs.server.membership.Membership;
import io.kvs.server.membership.Watchdog;
import io.kvs.server.metrics.ServerMetrics;
import io.kvs.server.regions.HostedRegions;
import io.kvs.server.tcp.ClientPort;
import io.kvs.server.tcp.ClientPortOptions;
import io.kvs.server.tcp.NativeClientPort;
import io.kvs.service.RegionService;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.nio.file.Files;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A region server: the engine with its volume under the server's directory, the native request
 * handler, both transports in front of it (the native client door on the client TCP port and,
 * unless disabled, the fabric transport), the control RPC the master commands it through, and its
 * ephemeral node in ZooKeeper. It holds no region until the master opens them.
 *
 * <p>Stopping it ({@link #close}) leaves the cluster first (the node goes, so the master stops
 * routing to it), then drains the transports, then syncs and closes the engine: a clean stop loses
 * nothing.
 */
public final class RegionServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RegionServer.class);

  private final ServerOptions options;
  private final Engine engine;
  private final RegionService service;
  private final HostedRegions regions;
  private final ClientPort tcp;
  private final FabricServer fabric;
  private final ControlServer control;
  private final HttpEndpoint http;
  private final ProcessMetrics metrics;
  private final ServerMetrics serverMetrics;
  private final CuratorFramework curator;
  private final Membership membership;
  private final FailureAnnouncer failures;
  private final Lease lease;
  private final Watchdog watchdog;
  private final ServerInfo info;

  private RegionServer(ServerOptions options) throws Exception {
    this.options = options;
    Files.createDirectories(options.directory());
    EngineOptions.Builder engineOptions = EngineOptions.builder();
    if (options.memoryBudgetBytes() > 0) {
      engineOptions.memoryBudgetBytes(options.memoryBudgetBytes());
    }
    if (options.l0SizeBytes() > 0) {
      engineOptions.l0SizeBytes(options.l0SizeBytes());
    }
    if (options.growthFactor() > 0) {
      engineOptions.growthFactor(options.growthFactor());
    }
    engineOptions.sync(options.syncWrites());
    engine = Engine.open(options.directory().resolve("volume"), engineOptions.build());
    service = RegionService.create(engine);
    // Fenced from the start: no primary answers before the first lease is granted.
    service.requireLease();
    curator =
        ZooKeeperAcls.apply(
                CuratorFrameworkFactory.builder()
                    .connectString(options.zookeeper())
                    .sessionTimeoutMs(options.sessionTimeoutMs())
                    .connectionTimeoutMs(10_000)
                    .retryPolicy(new ExponentialBackoffRetry(100, 10, 2_000)),
                options.security().zookeeper())
            .build();
    curator.start();
    ClusterPaths paths = new ClusterPaths(options.cluster());
    regions =
        new HostedRegions(
            options.id(),
            engine,
            service,
            options.directory(),
            id -> lookUp(paths, id),
            this::sessionId);
    ClientPortOptions port =
        ClientPortOptions.defaults()
            .withHost(options.host())
            .withPort(options.tcpPort())
            .withShards(options.shards())
            .withMaxConnections(options.maxClientConnections());
    tcp =
        NativeClientPort.start(
            service, port, options.security().clientSecret(), options.security().tls());
    fabric =
        options.hasFabric()
            ? FabricServer.start(
                FabricOptions.defaults(options.fabricProvider())
                    .withHost(options.host())
                    .withPort(options.fabricPort())
                    .withSecret(options.security().secret())
                    .withClientSecret(options.security().clientSecret()),
                service)
            : null;
    control =
        ControlServer.start(regions, options.host(), options.controlPort(), options.security());
    http = HttpEndpoint.start(options.host(), options.httpPort());
    metrics = ProcessMetrics.start(Tags.of("process", "server", "server", options.id()));
    serverMetrics =
        ServerMetrics.start(metrics.registry(), service, engine, regions, options.requestMetrics());
    registerBoundMeters(metrics.registry());
    metrics.serve(http);
    info =
        new ServerInfo(
            options.id(),
            options.host(),
            tcp.port(),
            fabric != null ? fabric.port() : 0,
            fabric != null ? options.fabricProvider() : "",
            control.port(),
            http.port());
    membership = Membership.register(curator, paths, info, Duration.ofSeconds(30));
    failures = FailureAnnouncer.start(service, membership);
    lease =
        Lease.start(
            curator,
            paths.server(options.id()),
            service,
            Duration.ofMillis(options.sessionTimeoutMs()),
            regions::closeOpenedUnder);
    watchdog =
        Watchdog.start(Duration.ofMillis(options.watchdogMs()), this::probeLoops, this::stopStuck);
    LOG.info("region server {} up: {}", options.id(), info);
  }

  /**
   * What the front doors' bounds turned away (docs/OPERATIONS.md, "Bounds and overload"): client
   * connections open and refused, connections stopped for not reading their replies, control
   * commands answered OVERLOADED.
   */
  private void registerBoundMeters(MeterRegistry registry) {
    Gauge.builder("kvs.server.tcp.connections", tcp, ClientPort::connections)
        .description("client connections open on the client TCP port")
        .register(registry);
    FunctionCounter.builder(
            "kvs.server.tcp.connections.refused", tcp, ClientPort::refusedConnections)
        .description("client connections closed on arrival: the most allowed were open")
        .register(registry);
    FunctionCounter.builder("kvs.server.tcp.output.stalls", tcp, ClientPort::outputStalls)
        .description("times a client connection stopped being read: its replies were not read")
        .register(registry);
    FunctionCounter.builder("kvs.server.control.overloaded", control, ControlServer::overloaded)
        .description("control commands answered OVERLOADED: their lane's queue was full")
        .register(registry);
  }

  /** The watchdog's probe of the request path's loops: each one's name, and whether it answered. */
  private Map<String, Boolean> probeLoops() {
    Map<String, Boolean> answered = new LinkedHashMap<>();
    answered.put("the replication thread (kvs-replicate)", service.probeReplication());
    if (fabric != null) {
      // A backup's side: what its primaries send arrives through this loop.
      answered.put(
          options.fabricProvider().equals("stream")
              ? "the replication stream loop (kvs-stream)"
              : "the fabric's spinning thread (kvs-fab-spin)",
          fabric.probe());
    }
    boolean[] shards = tcp.probeShards();
    for (int i = 0; i < shards.length; i++) {
      answered.put("shard " + i + " (kvs-shard-" + i + ")", shards[i]);
    }
    return answered;
  }

  /**
   * The watchdog found {@code loop} stuck: this server cannot serve its regions, yet its session
   * and lease would keep the master from moving them. It stops answering (the lease ends now), says
   * why, and halts -- a clean stop would wait for the stuck thread -- so that its session expires
   * and the master recovers its regions as after a crash.
   */
  private void stopStuck(String loop, Duration silent) {
    service.renewLease(0);
    LOG.error(
        "{} has not come round its loop for {} ms (watchdog limit {} ms; thread state: {}): this"
            + " server cannot serve its regions, so it stops now (exit code {}) and the master"
            + " moves them",
        loop,
        silent.toMillis(),
        options.watchdogMs(),
        Watchdog.threadState(loop),
        ServerOptions.EXIT_STUCK);
    Runtime.getRuntime().halt(ServerOptions.EXIT_STUCK);
  }

  /** This server's ZooKeeper session id now, 0 if it has none. */
  private long sessionId() {
    try {
      return curator.getZookeeperClient().getZooKeeper().getSessionId();
    } catch (Exception e) { // not connected, or closing
      return 0;
    }
  }

  private ServerInfo lookUp(ClusterPaths paths, String id) {
    try {
      return ClusterJson.decodeServer(curator.getData().forPath(paths.server(id)));
    } catch (KeeperException.NoNodeException e) {
      return null;
    } catch (Exception e) {
      throw KvsException.of(
          StatusCode.IO_ERROR, "cannot look server " + id + " up in ZooKeeper: " + e);
    }
  }

  /** Starts a server and registers it in the cluster. */
  public static RegionServer start(ServerOptions options) throws Exception {
    return new RegionServer(options);
  }

  /** Where it listens, as registered. */
  public ServerInfo info() {
    return info;
  }

  /** Its operator HTTP port ({@code /health}, {@code /metrics}). */
  public HttpEndpoint http() {
    return http;
  }

  /** Its control RPC server (tests count the connections it refused). */
  public ControlServer control() {
    return control;
  }

  /** Its meters (JMX and {@code GET /metrics}; docs/OPERATIONS.md, "Metrics"). */
  public ProcessMetrics metrics() {
    return metrics;
  }

  /** The regions it holds (tests and tools read a backup's engine through it). */
  public HostedRegions regions() {
    return regions;
  }

  @Override
  public void close() throws java.io.IOException {
    LOG.info("region server {} stopping", options.id());
    watchdog.close(); // the loops stop below
    lease.close();
    failures.close();
    membership.close();
    control.close();
    tcp.close(); // drains client requests
    regions.closeAll(); // primaries hand their last records to the backups
    if (fabric != null) {
      fabric.close();
    }
    curator.close();
    http.close();
    serverMetrics.close();
    metrics.close();
    service.close();
    engine.close();
    LOG.info("region server {} stopped", options.id());
  }
}
