package io.kvs.core.cluster;

import java.util.Objects;

/**
 * A live region server as it registers itself (an ephemeral node under {@link
 * ClusterPaths#servers()}): its id and where to reach it.
 *
 * @param id unique, stable across restarts (the server's directory is named after it)
 * @param host the address its ports listen on
 * @param tcpPort the client TCP port (wire protocol; docs/PROTOCOL.md "Client TCP framing")
 * @param fabricPort the fabric transport's bootstrap port, 0 if it serves no fabric transport
 * @param fabricProvider the libfabric provider of that transport ({@code shm}, {@code tcp}, {@code
 *     verbs}), empty if none
 * @param controlPort the control RPC the master sends region commands to
 * @param httpPort the operator HTTP port ({@code /health}, {@code /metrics}), 0 if it has none
 */
public record ServerInfo(
    String id,
    String host,
    int tcpPort,
    int fabricPort,
    String fabricProvider,
    int controlPort,
    int httpPort) {
  public ServerInfo {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(host, "host");
    fabricProvider = fabricProvider == null ? "" : fabricProvider;
    if (id.isEmpty() || !id.matches("[A-Za-z0-9_.-]+")) {
      throw new IllegalArgumentException("server id must be [A-Za-z0-9_.-]+: " + id);
    }
  }

  /** A server without an operator HTTP port. */
  public ServerInfo(
      String id, String host, int tcpPort, int fabricPort, String fabricProvider, int controlPort) {
    this(id, host, tcpPort, fabricPort, fabricProvider, controlPort, 0);
  }

  /** Whether clients can reach it over the fabric transport. */
  public boolean hasFabric() {
    return fabricPort > 0 && !fabricProvider.isEmpty();
  }
}
