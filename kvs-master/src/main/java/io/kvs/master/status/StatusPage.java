package io.kvs.master.status;

import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.http.HttpEndpoint;
import io.kvs.core.http.HttpEndpoint.Response;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The master's status page on its operator HTTP port: {@code /} and {@code /status} answer the page
 * (plain HTML with a small inline script that renders {@code /api/status} and refreshes it every
 * few seconds; no external resources), {@code /api/status} answers the JSON ({@link StatusReport};
 * docs/OPERATIONS.md "Status page"). Other paths under {@code /} answer 404.
 */
public final class StatusPage {
  /** Where a page's snapshot comes from; called once per request of {@code /api/status}. */
  @FunctionalInterface
  public interface Source {
    ClusterSnapshot snapshot() throws Exception;
  }

  static final String RESOURCE = "status.html";

  private final String html;
  private final Source source;

  private StatusPage(Source source) {
    this.source = source;
    this.html = loadHtml();
  }

  /** Serves the page of {@code source} on {@code http}. */
  public static StatusPage serve(HttpEndpoint http, Source source) {
    StatusPage page = new StatusPage(source);
    http.route("/", page::page);
    http.route("/status", page::page);
    http.route("/api/status", page::json);
    return page;
  }

  private Response page(String path, String query) {
    if (!path.equals("/") && !path.equals("/status")) {
      return Response.text(404, "no such page: " + path + " (try /status)\n");
    }
    return Response.html(html);
  }

  private Response json(String path, String query) throws Exception {
    if (!path.equals("/api/status")) {
      return Response.text(404, "no such endpoint: " + path + "\n");
    }
    byte[] body = ClusterJson.write(StatusReport.of(source.snapshot()));
    return new Response(200, "application/json", body);
  }

  private static String loadHtml() {
    try (InputStream in = StatusPage.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(
            "the status page's " + RESOURCE + " is not on the class path");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the status page's " + RESOURCE, e);
    }
  }
}
