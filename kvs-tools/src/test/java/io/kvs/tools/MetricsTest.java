package io.kvs.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.kvs.client.KvsClient;
import io.kvs.core.metrics.ProcessMetrics;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Metrics of a cluster in this JVM under a little load: the client's meters in the application's
 * registry, the servers' and the master's on JMX (what jconsole shows) and in their Prometheus
 * scrape.
 */
class MetricsTest {
  private static final Duration WITHIN = Duration.ofSeconds(20);
  private static final int WRITES = 200;

  @TempDir Path directory;

  private static Set<String> kvsBeans() throws Exception {
    return ManagementFactory.getPlatformMBeanServer()
        .queryNames(new ObjectName(ProcessMetrics.JMX_DOMAIN + ":*"), null)
        .stream()
        .map(ObjectName::toString)
        .collect(Collectors.toSet());
  }

  /** Polls {@code condition} until it holds or {@link #WITHIN} passes. */
  private static void await(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + WITHIN.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("not within " + WITHIN + ": " + what);
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
    }
  }

  @Test
  void clientServersAndMasterShowTheirMetersOnJmxAndInTheScrape() throws Exception {
    SimpleMeterRegistry clientMeters = new SimpleMeterRegistry();
    try (InProcessCluster cluster = InProcessCluster.start(directory, "metrics", 4, List.of());
        KvsClient client =
            KvsClient.builder()
                .zookeeper(cluster.zookeeper())
                .cluster("metrics")
                .meterRegistry(clientMeters)
                .build()) {
      for (int i = 0; i < WRITES; i++) {
        client.put(("key" + i).getBytes(StandardCharsets.UTF_8), new byte[] {(byte) i});
      }
      client.get("key0".getBytes(StandardCharsets.UTF_8));

      Timer puts =
          clientMeters
              .find("kvs.client.operations")
              .tags("operation", "put", "outcome", "ok")
              .timer();
      assertThat(puts).isNotNull();
      assertThat(puts.count()).isEqualTo(WRITES);

      // Every put reached one of the servers; each reads its native counters once a second.
      await(
          "the servers count " + WRITES + " puts",
          () ->
              cluster.servers().stream().mapToDouble(s -> putsCounted(s.metrics().scrape())).sum()
                  == WRITES);
      // The keys fall in few regions: look at a server that took puts (series of an operation
      // appear once it was counted).
      String scrape =
          cluster.servers().stream()
              .map(s -> s.metrics().scrape())
              .filter(text -> putsCounted(text) > 0)
              .findFirst()
              .orElseThrow();
      assertThat(scrape)
          .contains("kvs_server_request_latency_seconds_count{")
          .contains("kvs_server_regions{")
          .contains("kvs_engine_memory_budget_bytes{")
          .contains("jvm_gc_");
      await(
          "the master counts its servers",
          () ->
              cluster
                  .master()
                  .metrics()
                  .scrape()
                  .contains("kvs_master_servers_live{master=\"m1\",process=\"master\"} 3.0"));
      assertThat(cluster.master().metrics().scrape())
          .contains("kvs_master_regions{master=\"m1\",process=\"master\",state=\"open\"} 4.0");

      Set<String> beans = kvsBeans();
      assertThat(beans).anySatisfy(name -> assertThat(name).contains("kvsServerRequests"));
      assertThat(beans).anySatisfy(name -> assertThat(name).contains("kvsMasterServersLive"));
      assertThat(beans).anySatisfy(name -> assertThat(name).contains("kvsEngineL0"));
    }
  }

  /** The puts answered OK in a server's scrape. */
  private static double putsCounted(String scrape) {
    return scrape
        .lines()
        .filter(line -> line.startsWith("kvs_server_requests_total{"))
        .filter(line -> line.contains("operation=\"put\"") && line.contains("status=\"ok\""))
        .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
        .sum();
  }
}
