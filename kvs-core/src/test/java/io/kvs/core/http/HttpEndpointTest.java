package io.kvs.core.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class HttpEndpointTest {
  private final HttpClient client = HttpClient.newHttpClient();
  private HttpEndpoint endpoint;

  @BeforeEach
  void start() {
    endpoint = HttpEndpoint.start("127.0.0.1", 0);
  }

  @AfterEach
  void stop() {
    endpoint.close();
  }

  private HttpResponse<String> send(String method, String path) throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + endpoint.port() + path))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build();
    return client.send(request, HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void healthAnswersOk() throws Exception {
    HttpResponse<String> response = send("GET", "/health");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo("ok\n");
  }

  @Test
  void aRouteGetsItsPathAndQuery() throws Exception {
    endpoint.route(
        "/echo", (path, query) -> HttpEndpoint.Response.json("\"" + path + "?" + query + "\""));
    HttpResponse<String> response = send("GET", "/echo/x?a=1");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
    assertThat(response.body()).isEqualTo("\"/echo/x?a=1\"");
  }

  @Test
  void aFailingRouteAnswers500AndTheEndpointKeepsServing() throws Exception {
    endpoint.route(
        "/broken",
        (path, query) -> {
          throw new IllegalStateException("no data yet");
        });
    HttpResponse<String> response = send("GET", "/broken");
    assertThat(response.statusCode()).isEqualTo(500);
    assertThat(response.body()).contains("no data yet");
    assertThat(send("GET", "/health").statusCode()).isEqualTo(200);
  }

  @Test
  void onlyGetAndHeadAreServed() throws Exception {
    assertThat(send("POST", "/health").statusCode()).isEqualTo(405);
    assertThat(send("HEAD", "/health").statusCode()).isEqualTo(200);
  }

  @Test
  void anUnknownPathIs404() throws Exception {
    assertThat(send("GET", "/nothing-here").statusCode()).isEqualTo(404);
  }
}
