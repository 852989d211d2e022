package io.kvs.server.metrics;

import io.kvs.engine.Engine;
import io.kvs.server.regions.HostedRegions;
import io.kvs.service.RegionService;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A region server's meters (docs/OPERATIONS.md, "Metrics" lists them): requests ({@link
 * RequestMeters}), regions, replication and the engine ({@link StateMeters}). One thread, {@code
 * kvs-metrics}, reads the native counters every {@link #INTERVAL} (one JNI call for the requests,
 * one for replication, one for the engine and one per region held) and the meters read that
 * snapshot; scrapes and JMX reads never enter native code. With request metrics off ({@link
 * #start}), the native request path counts nothing and the request meters are not registered.
 */
public final class ServerMetrics implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ServerMetrics.class);

  /** How often the native counters are read. */
  public static final Duration INTERVAL = Duration.ofSeconds(1);

  private final RegionService service;
  private final RequestMeters requests;
  private final StateMeters state;
  private final ScheduledExecutorService thread;

  private ServerMetrics(
      MeterRegistry registry,
      RegionService service,
      Engine engine,
      HostedRegions regions,
      boolean requestMetrics) {
    this.service = service;
    service.requestMetrics(requestMetrics);
    this.requests = requestMetrics ? new RequestMeters(registry) : null;
    this.state = new StateMeters(registry, service, engine, regions);
    this.thread =
        Executors.newSingleThreadScheduledExecutor(
            runnable -> {
              Thread t = new Thread(runnable, "kvs-metrics");
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Registers the meters in {@code registry} and starts reading the counters; {@code
   * requestMetrics} false turns request counting off in {@code service}.
   */
  public static ServerMetrics start(
      MeterRegistry registry,
      RegionService service,
      Engine engine,
      HostedRegions regions,
      boolean requestMetrics) {
    ServerMetrics metrics = new ServerMetrics(registry, service, engine, regions, requestMetrics);
    metrics.poll();
    metrics.thread.scheduleWithFixedDelay(
        metrics::poll, INTERVAL.toMillis(), INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
    return metrics;
  }

  /** Reads every counter now (the thread does it every {@link #INTERVAL}). */
  void poll() {
    try {
      if (requests != null) {
        requests.update(service.requestStats());
      }
      state.update();
    } catch (RuntimeException e) {
      // A server closing (service or engine closed) or a region closed meanwhile: next time.
      LOG.debug("metrics poll failed: {}", e.toString());
    }
  }

  /** Stops reading; the meters keep their last values (the registry is the process's). */
  @Override
  public void close() {
    thread.shutdownNow();
    try {
      thread.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
