package io.kvs.core.cluster;

import java.util.Objects;

/**
 * Where a running master serves its operator HTTP port (status page, {@code /metrics}), as it
 * publishes it in an ephemeral node under {@link ClusterPaths#masterHttp()} so that tools and the
 * other masters' pages can link to it.
 *
 * @param id the master's id (its name in the election)
 * @param host the address its HTTP port listens on
 * @param httpPort the HTTP port (1 to 65535)
 */
public record MasterAddress(String id, String host, int httpPort) {
  public MasterAddress {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(host, "host");
    if (id.isEmpty() || host.isEmpty()) {
      throw new IllegalArgumentException("a master address needs an id and a host");
    }
    if (httpPort < 1 || httpPort > 65_535) {
      throw new IllegalArgumentException("HTTP port out of range: " + httpPort);
    }
  }

  /** {@code http://host:port} followed by {@code path} (which starts with a slash). */
  public String url(String path) {
    return url(host, httpPort, path);
  }

  /** {@code http://host:port} followed by {@code path}, an IPv6 host in brackets. */
  public static String url(String host, int port, String path) {
    String hostPart = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    return "http://" + hostPart + ":" + port + path;
  }
}
