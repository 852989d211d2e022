package io.kvs.bench.chaos;

import io.kvs.core.cluster.ServerInfo;
import io.kvs.tools.fault.PortGarbage;
import io.kvs.tools.fault.ProcessSockets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A stranger on the network: every TCP port every process of the cluster listens on (found in
 * {@code /proc}: a server's client, fabric bootstrap, control and HTTP ports and the fabric
 * transport's own; a master's HTTP port; ZooKeeper's) gets random bytes, cut frames, huge length
 * prefixes, junk behind well-known magic numbers, resets, and two connections that say nothing
 * until the fault heals ({@link PortGarbage}). Whether every process survived and served on is what
 * the campaign checks after.
 */
final class GarbageFault {
  private static final int SILENT_PER_PORT = 2;
  private static final long SEND_WAIT_MILLIS = 30_000;

  private final ChaosCluster cluster;
  private final Cleanup cleanup;

  GarbageFault(ChaosCluster cluster, Cleanup cleanup) {
    this.cluster = cluster;
    this.cleanup = cleanup;
  }

  Faults.Active send(PlannedFault fault, FaultRecord record) throws Exception {
    Map<String, ServerInfo> servers = cluster.servers();
    List<PortGarbage.Target> targets = new ArrayList<>();
    for (String name : cluster.processNames()) {
      if (!cluster.running(name)) {
        continue; // an overlapping fault took it away
      }
      long pid = cluster.process(name).pid();
      ServerInfo server =
          name.startsWith("server-") ? servers.get(name.substring("server-".length())) : null;
      for (int port : ProcessSockets.listeningPorts(pid)) {
        targets.add(new PortGarbage.Target(name + " " + label(server, port), "127.0.0.1", port));
      }
    }
    record.victim(targets.size() + " ports");
    record.injected(System.nanoTime());
    PortGarbage garbage = cleanup.add(PortGarbage.start(targets, fault.salt(), SILENT_PER_PORT));
    return () -> {
      boolean sent = garbage.awaitSent(SEND_WAIT_MILLIS);
      cleanup.close(garbage);
      PortGarbage.Report report = garbage.report();
      record.note(
          String.format(
              "%d ports, %d connections (%d refused, %d silent), %d bytes sent, %d answered%s",
              report.targets(),
              report.connections(),
              report.refused(),
              report.silentHeld(),
              report.bytesSent(),
              report.bytesAnswered(),
              sent ? "" : "; not every pattern was sent within " + SEND_WAIT_MILLIS + " ms"));
    };
  }

  private static String label(ServerInfo server, int port) {
    if (server == null) {
      return "port " + port;
    }
    if (port == server.tcpPort()) {
      return "client port " + port;
    }
    if (port == server.fabricPort()) {
      return "fabric bootstrap port " + port;
    }
    if (port == server.controlPort()) {
      return "control port " + port;
    }
    if (port == server.httpPort()) {
      return "http port " + port;
    }
    return "fabric transport port " + port;
  }
}
