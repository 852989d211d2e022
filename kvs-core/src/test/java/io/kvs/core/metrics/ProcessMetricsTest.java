package io.kvs.core.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.http.HttpEndpoint;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Tags;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Set;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;

class ProcessMetricsTest {
  private static Set<ObjectName> kvsBeans() throws Exception {
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    return server.queryNames(new ObjectName(ProcessMetrics.JMX_DOMAIN + ":*"), null);
  }

  @Test
  void aMeterIsOnJmxAndInThePrometheusScrapeWithTheCommonTags() throws Exception {
    try (ProcessMetrics metrics = ProcessMetrics.start(Tags.of("process", "test", "id", "t1"));
        HttpEndpoint http = HttpEndpoint.start("127.0.0.1", 0)) {
      Counter counter = metrics.registry().counter("kvs.test.things", "kind", "a");
      counter.increment(3);
      metrics.serve(http);

      HttpResponse<String> response =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(
                          URI.create("http://127.0.0.1:" + http.port() + ProcessMetrics.PATH))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.headers().firstValue("Content-Type"))
          .hasValue(ProcessMetrics.CONTENT_TYPE);
      assertThat(response.body())
          .contains("kvs_test_things_total{id=\"t1\",kind=\"a\",process=\"test\"} 3.0")
          // the JVM's own meters are bound
          .contains("jvm_memory_used_bytes")
          .contains("process_cpu_usage");

      assertThat(kvsBeans())
          .anySatisfy(name -> assertThat(name.toString()).contains("kvsTestThings"));
    }
    // Closed: its MBeans are gone.
    assertThat(kvsBeans())
        .noneSatisfy(name -> assertThat(name.toString()).contains("kvsTestThings"));
  }
}
