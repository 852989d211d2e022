package io.kvs.core.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A process's operator HTTP port: GET routes registered by path, answered by two threads. Bounded:
 * at most {@link #QUEUE_LIMIT} requests wait for them; beyond that the accepting thread answers the
 * next one itself, so it accepts no more meanwhile (the kernel's backlog holds, then refuses, the
 * rest). {@code /health} answers 200 "ok" while the process runs.
 */
public final class HttpEndpoint implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(HttpEndpoint.class);

  /** Requests that may wait for one of the two threads before new ones are refused with 503. */
  public static final int QUEUE_LIMIT = 64;

  /** What a route answers. */
  public record Response(int status, String contentType, byte[] body) {
    public static Response text(int status, String text) {
      return new Response(
          status, "text/plain; charset=utf-8", text.getBytes(StandardCharsets.UTF_8));
    }

    public static Response json(String json) {
      return new Response(200, "application/json", json.getBytes(StandardCharsets.UTF_8));
    }

    public static Response html(String html) {
      return new Response(200, "text/html; charset=utf-8", html.getBytes(StandardCharsets.UTF_8));
    }
  }

  /** A GET route: the request's path and query string in, a response out. */
  @FunctionalInterface
  public interface Route {
    Response handle(String path, String query) throws Exception;
  }

  private final HttpServer server;
  private final ThreadPoolExecutor threads;

  private HttpEndpoint(String host, int port) {
    try {
      server = HttpServer.create(new InetSocketAddress(host, port), 0);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on " + host + ":" + port + " (HTTP)", e);
    }
    threads =
        new ThreadPoolExecutor(
            2,
            2,
            0,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(QUEUE_LIMIT),
            runnable -> {
              Thread thread = new Thread(runnable, "kvs-http");
              thread.setDaemon(true);
              return thread;
            },
            new ThreadPoolExecutor.CallerRunsPolicy());
    server.setExecutor(threads);
    route("/health", (path, query) -> Response.text(200, "ok\n"));
    server.start();
  }

  /** Listens on {@code host:port} (0: a free port). */
  public static HttpEndpoint start(String host, int port) {
    return new HttpEndpoint(host, port);
  }

  /** The port it listens on. */
  public int port() {
    return server.getAddress().getPort();
  }

  /**
   * Answers GET (and HEAD) requests for {@code path} and the paths under it with {@code route}; a
   * route that throws answers 500 with the exception's message. Other methods get 405.
   */
  public HttpEndpoint route(String path, Route route) {
    server.createContext(path, exchange -> answer(exchange, route));
    return this;
  }

  private static void answer(HttpExchange exchange, Route route) throws IOException {
    try (exchange) {
      String method = exchange.getRequestMethod();
      Response response;
      if (!method.equals("GET") && !method.equals("HEAD")) {
        response = Response.text(405, "only GET is served here\n");
      } else {
        try {
          response =
              route.handle(
                  exchange.getRequestURI().getPath(), exchange.getRequestURI().getRawQuery());
        } catch (Exception e) {
          LOG.warn("HTTP {} failed: {}", exchange.getRequestURI(), e.toString());
          response = Response.text(500, "error: " + e.getMessage() + "\n");
        }
      }
      exchange.getResponseHeaders().set("Content-Type", response.contentType());
      exchange.getResponseHeaders().set("Cache-Control", "no-store");
      boolean head = method.equals("HEAD");
      exchange.sendResponseHeaders(response.status(), head ? -1 : response.body().length);
      if (!head) {
        try (OutputStream body = exchange.getResponseBody()) {
          body.write(response.body());
        }
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
