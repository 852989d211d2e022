package io.kvs.master.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.http.HttpEndpoint;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class StatusPageTest {
  private static final ClusterSnapshot EMPTY =
      new ClusterSnapshot(
          "default",
          Optional.empty(),
          List.of(),
          Map.of(),
          Map.of(),
          "m1",
          true,
          "m1",
          false,
          List.of(),
          List.of(),
          Set.of(),
          1);

  @Test
  void servesThePageItsJsonAndNothingElse() throws Exception {
    AtomicReference<ClusterSnapshot> snapshot = new AtomicReference<>(EMPTY);
    HttpClient client = HttpClient.newHttpClient();
    try (HttpEndpoint http = HttpEndpoint.start("127.0.0.1", 0)) {
      StatusPage.serve(
          http,
          () -> {
            ClusterSnapshot current = snapshot.get();
            if (current == null) {
              throw new IllegalStateException("ZooKeeper is unreachable");
            }
            return current;
          });
      for (String page : List.of("/", "/status")) {
        HttpResponse<String> response = get(client, http, page);
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type"))
            .hasValue("text/html; charset=utf-8");
        assertThat(response.body()).contains("<table id=\"regions\">", "fetch(\"/api/status\"");
        assertThat(response.body())
            .as("no external resources")
            .doesNotContain("src=\"http", "href=\"http");
      }
      HttpResponse<String> json = get(client, http, "/api/status");
      assertThat(json.statusCode()).isEqualTo(200);
      assertThat(json.body()).contains("\"cluster\":{\"name\":\"default\",\"config\":null}");
      assertThat(get(client, http, "/nothing-here").statusCode()).isEqualTo(404);
      assertThat(get(client, http, "/api/status/more").statusCode()).isEqualTo(404);

      snapshot.set(null);
      HttpResponse<String> failed = get(client, http, "/api/status");
      assertThat(failed.statusCode()).isEqualTo(500);
      assertThat(failed.body()).contains("ZooKeeper is unreachable");
    }
  }

  private static HttpResponse<String> get(HttpClient client, HttpEndpoint http, String path)
      throws Exception {
    return client.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.port() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
