package io.kvs.core.metrics;

import io.kvs.core.http.HttpEndpoint;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.jmx.JmxConfig;
import io.micrometer.jmx.JmxMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;

/**
 * The metrics of one process (a region server or a master): one {@link MeterRegistry} that every
 * component registers in, exported two ways at once: on JMX under the domain {@value #JMX_DOMAIN}
 * (jconsole, or any JMX agent) and as a Prometheus scrape ({@link #scrape}, served at {@value
 * #PATH} by {@link #serve}). The JVM's memory, GC, threads, class loading, CPU and uptime are bound
 * too. Every meter carries the common tags given (which process it is: bounded, one value per
 * process), so several processes in one JVM (tests) keep apart on JMX. Close it when the process
 * stops: its MBeans are unregistered.
 */
public final class ProcessMetrics implements AutoCloseable {
  /** The JMX domain of every meter. */
  public static final String JMX_DOMAIN = "kvs";

  /** Where {@link #serve} answers the Prometheus scrape. */
  public static final String PATH = "/metrics";

  /** The Prometheus text exposition format (version 0.0.4), which Prometheus 2.x scrapes. */
  public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  private final CompositeMeterRegistry registry = new CompositeMeterRegistry();
  private final JmxMeterRegistry jmx;
  private final PrometheusMeterRegistry prometheus;
  private final JvmGcMetrics gc = new JvmGcMetrics();

  private ProcessMetrics(Tags commonTags) {
    jmx = new JmxMeterRegistry(new KvsJmxConfig(), Clock.SYSTEM);
    prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    registry.add(jmx);
    registry.add(prometheus);
    registry.config().commonTags(commonTags);
    new JvmMemoryMetrics().bindTo(registry);
    gc.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ClassLoaderMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
  }

  /**
   * A process's metrics, every meter tagged with {@code commonTags} (e.g. {@code process=server,
   * server=<id>}).
   */
  public static ProcessMetrics start(Tags commonTags) {
    return new ProcessMetrics(commonTags);
  }

  /** The registry components register their meters in. */
  public MeterRegistry registry() {
    return registry;
  }

  /** Every meter in the Prometheus text format. */
  public String scrape() {
    return prometheus.scrape();
  }

  /** Answers {@code GET /metrics} on {@code http} with {@link #scrape}. */
  public void serve(HttpEndpoint http) {
    http.route(
        PATH,
        (path, query) ->
            new HttpEndpoint.Response(
                200, CONTENT_TYPE, scrape().getBytes(StandardCharsets.UTF_8)));
  }

  @Override
  public void close() {
    gc.close();
    registry.close();
    jmx.close();
    prometheus.close();
  }

  private static final class KvsJmxConfig implements JmxConfig {
    @Override
    public String get(String key) {
      return null;
    }

    @Override
    public String domain() {
      return JMX_DOMAIN;
    }
  }
}
