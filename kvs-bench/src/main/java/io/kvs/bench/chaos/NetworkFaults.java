package io.kvs.bench.chaos;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.tools.fault.NetworkCut;
import io.kvs.tools.fault.ProcessSockets;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Network cuts ({@link NetworkCut}: iptables and a cgroup): a region server cut from ZooKeeper
 * while its clients still reach it, and a primary cut from one of its backups (every port the
 * backup's process listens on: the fabric bootstrap port and the transport's own), while both still
 * reach ZooKeeper, the master and clients.
 */
final class NetworkFaults {
  private final ChaosCluster cluster;
  private final Cleanup cleanup;

  NetworkFaults(ChaosCluster cluster, Cleanup cleanup) {
    this.cluster = cluster;
    this.cleanup = cleanup;
  }

  Faults.Active cutFromZooKeeper(PlannedFault fault, FaultRecord record) throws Exception {
    String name = "server-" + Faults.server(cluster, fault.target());
    ProcessHandle process = cluster.process(name);
    record.victim(name);
    record.injected(System.nanoTime());
    NetworkCut cut = cleanup.add(NetworkCut.cut(process, Set.of(cluster.zookeeperPort())));
    record.note("dropped its traffic to ZooKeeper port " + cluster.zookeeperPort());
    return () -> cleanup.close(cut);
  }

  Faults.Active cutReplication(PlannedFault fault, FaultRecord record) throws Exception {
    RegionDescriptor region = cluster.region(fault.target().region());
    List<String> backups = region.backups();
    if (region.primary().isEmpty() || backups.isEmpty()) {
      throw new IllegalStateException("region " + region.id() + " has no primary and backup");
    }
    int index = fault.target().index();
    List<String> cut =
        index >= Target.EVERY_BACKUP ? backups : List.of(backups.get(index % backups.size()));
    String primary = "server-" + region.primary();
    ProcessHandle primaryProcess = cluster.process(primary);
    Set<Integer> ports = new TreeSet<>();
    for (String backup : cut) {
      ports.addAll(ProcessSockets.listeningPorts(cluster.process("server-" + backup).pid()));
    }
    record.victim(region.primary() + "->" + String.join(",", cut));
    record.injected(System.nanoTime());
    NetworkCut networkCut = cleanup.add(NetworkCut.cut(primaryProcess, ports));
    record.note(
        "region "
            + region.id()
            + ": dropped "
            + region.primary()
            + "'s traffic to "
            + cut
            + " (ports "
            + ports
            + ")");
    return () -> {
      if (fault.thenKill()) {
        cluster.kill(primary);
        record.note("killed " + primary + " while cut off");
      }
      try {
        cleanup.close(networkCut);
      } finally {
        if (fault.thenKill()) {
          cluster.restart(primary);
        }
      }
    };
  }
}
