package io.kvs.tools.local;

import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.MasterAddress;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.master.status.MasterAddresses;
import java.util.List;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;

/**
 * Where an operator reaches a cluster's processes over HTTP: each master's status page and every
 * process's {@code /metrics}, read from what masters ({@code master-http/<id>}) and servers ({@code
 * servers/<id>}) publish in ZooKeeper.
 */
final class OperatorAddresses {
  private OperatorAddresses() {}

  /** Prints the status page of each master (the active one first) and every metrics address. */
  static void print(
      CuratorFramework curator, ClusterPaths paths, Map<String, ServerInfo> servers, String active)
      throws Exception {
    List<MasterAddress> masters = MasterAddresses.read(curator, paths);
    masters.sort((a, b) -> Boolean.compare(!a.id().equals(active), !b.id().equals(active)));
    if (masters.isEmpty()) {
      System.out.println("status page: no master publishes one (none running?)");
    }
    for (MasterAddress master : masters) {
      System.out.printf(
          "status page: %s (master %s%s)%n",
          master.url("/status"),
          master.id(),
          master.id().equals(active) ? ", active" : ", standby");
    }
    System.out.println("metrics:");
    for (MasterAddress master : masters) {
      System.out.printf("  master %-6s %s%n", master.id(), master.url("/metrics"));
    }
    for (ServerInfo server : servers.values()) {
      System.out.printf(
          "  server %-6s %s%n",
          server.id(),
          server.httpPort() > 0
              ? MasterAddress.url(server.host(), server.httpPort(), "/metrics")
              : "(no HTTP port)");
    }
  }
}
