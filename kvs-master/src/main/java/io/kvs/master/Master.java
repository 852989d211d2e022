package io.kvs.master;

import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.control.ControlClient;
import io.kvs.core.http.HttpEndpoint;
import io.kvs.core.metrics.ProcessMetrics;
import io.kvs.core.security.ZooKeeperAcls;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A master: takes part in the election ({@link Election}); while it leads, it creates the cluster
 * if there is none and reconciles every region with the live servers, on every membership change
 * and periodically. Any number of masters may run; one is active, the others take over when it
 * goes.
 */
public final class Master implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Master.class);

  private final MasterOptions options;
  private final CuratorFramework curator;
  private final Election election;
  private final CuratorCache servers;
  private final RegionStore store;
  private final ControlClient control;
  private final Reconciler reconciler;
  private final HttpEndpoint http;
  private final MasterStatus status;
  private final ProcessMetrics metrics;
  private final MasterMetrics masterMetrics;
  private final ScheduledExecutorService loop =
      Executors.newSingleThreadScheduledExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "kvs-master");
            thread.setDaemon(true);
            return thread;
          });
  private final AtomicBoolean passQueued = new AtomicBoolean();
  private volatile boolean converged;

  private Master(MasterOptions options) throws Exception {
    this.options = options;
    ClusterPaths paths = new ClusterPaths(options.cluster());
    curator =
        ZooKeeperAcls.apply(
                CuratorFrameworkFactory.builder()
                    .connectString(options.zookeeper())
                    .sessionTimeoutMs((int) options.sessionTimeout().toMillis())
                    .connectionTimeoutMs(10_000)
                    .retryPolicy(new ExponentialBackoffRetry(100, 10, 2_000)),
                options.security().zookeeper())
            .build();
    curator.start();
    store = new RegionStore(curator, paths);
    store.ensurePath(paths.servers());
    control = new ControlClient(options.controlTimeout(), options.security());
    if (!options.security().authenticatesControl()) {
      LOG.warn(
          "SECURITY: master {} has no cluster secret and no TLS: it can command only region"
              + " servers whose control port accepts anyone (start it with --secret-file, see"
              + " docs/OPERATIONS.md, Security)",
          options.id());
    }
    metrics = ProcessMetrics.start(Tags.of("process", "master", "master", options.id()));
    masterMetrics = new MasterMetrics(metrics.registry(), this::isActive);
    reconciler =
        new Reconciler(
            options, store, control, masterMetrics, this::schedulePass, this::electionPath);
    Gauge.builder("kvs.master.commands.pending", reconciler, Reconciler::pendingCommands)
        .description("commands to region servers in flight or waiting in their servers' lanes")
        .register(metrics.registry());
    servers = CuratorCache.build(curator, paths.servers());
    servers.listenable().addListener((type, before, after) -> schedulePass());
    election =
        new Election(
            curator,
            paths.masters(),
            options.id(),
            new LeaderLatchListener() {
              @Override
              public void isLeader() {
                LOG.info("master {} is active", options.id());
                store.forget(); // another master may have changed regions meanwhile
                schedulePass();
              }

              @Override
              public void notLeader() {
                LOG.info("master {} is standing by", options.id());
                converged = false;
                store.forget();
                reconciler.recoveries().abandonAll();
              }
            });
    Gauge.builder("kvs.master.election.rejoins", election, Election::rejoined)
        .description("times this master found itself missing from the election and joined again")
        .register(metrics.registry());
    http = HttpEndpoint.start(options.host(), options.httpPort());
    metrics.serve(http);
    status =
        new MasterStatus(
            options,
            curator,
            store,
            election,
            reconciler.recoveries(),
            this::converged,
            control,
            http);
    servers.start();
    election.start();
    loop.scheduleWithFixedDelay(
        this::schedulePass,
        options.reconcileInterval().toMillis(),
        options.reconcileInterval().toMillis(),
        TimeUnit.MILLISECONDS);
    loop.scheduleWithFixedDelay(
        election::check,
        options.reconcileInterval().toMillis(),
        options.reconcileInterval().toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /** Starts a master; it becomes active once elected. */
  public static Master start(MasterOptions options) throws Exception {
    return new Master(options);
  }

  /** Its operator HTTP port (status page, {@code /metrics}, {@code /health}). */
  public HttpEndpoint http() {
    return http;
  }

  /** Its meters (JMX and {@code GET /metrics}; docs/OPERATIONS.md, "Metrics"). */
  public ProcessMetrics metrics() {
    return metrics;
  }

  /** Its node in the election, which its writes creating the cluster check. */
  private String electionPath() {
    return election.ourPath();
  }

  /** Whether this master is the active one. */
  public boolean isActive() {
    return election.hasLeadership();
  }

  /** Whether its last pass found every region open (false while standing by). */
  public boolean converged() {
    return converged && isActive();
  }

  private void schedulePass() {
    if (passQueued.compareAndSet(false, true)) {
      loop.execute(this::runPass);
    }
  }

  private void runPass() {
    passQueued.set(false);
    if (!election.hasLeadership()) {
      masterMetrics.standingBy();
      return;
    }
    long started = System.nanoTime();
    try {
      converged = reconciler.pass();
      masterMetrics.passed(System.nanoTime() - started, converged, false);
    } catch (Exception e) {
      converged = false;
      masterMetrics.passed(System.nanoTime() - started, false, true);
      LOG.warn("reconcile pass failed: {}", e.toString());
    }
  }

  @Override
  public void close() throws java.io.IOException {
    LOG.info("master {} stopping", options.id());
    loop.shutdownNow();
    try {
      loop.awaitTermination(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    http.close();
    status.close();
    election.close();
    servers.close();
    reconciler.close();
    control.close();
    curator.close();
    metrics.close();
  }
}
