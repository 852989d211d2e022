package io.kvs.bench.chaos;

import io.kvs.tools.fault.Signals;

/** SIGKILL and restart, SIGSTOP and SIGCONT, of a region server or a master. */
final class ProcessFaults {
  private final ChaosCluster cluster;

  ProcessFaults(ChaosCluster cluster) {
    this.cluster = cluster;
  }

  Faults.Active killServer(PlannedFault fault, FaultRecord record) throws Exception {
    return kill("server-" + Faults.server(cluster, fault.target()), record);
  }

  Faults.Active killMaster(PlannedFault fault, FaultRecord record) throws Exception {
    return kill("master-" + Faults.master(cluster, fault.target(), record), record);
  }

  Faults.Active pauseServer(PlannedFault fault, FaultRecord record) throws Exception {
    return pause("server-" + Faults.server(cluster, fault.target()), record);
  }

  Faults.Active pauseMaster(PlannedFault fault, FaultRecord record) throws Exception {
    return pause("master-" + Faults.master(cluster, fault.target(), record), record);
  }

  private Faults.Active kill(String name, FaultRecord record) throws Exception {
    record.victim(name);
    record.injected(System.nanoTime());
    cluster.kill(name);
    return () -> cluster.restart(name);
  }

  private Faults.Active pause(String name, FaultRecord record) throws Exception {
    ProcessHandle process = cluster.process(name);
    record.victim(name);
    record.injected(System.nanoTime());
    Signals.stop(process);
    return () -> Signals.resume(process);
  }
}
