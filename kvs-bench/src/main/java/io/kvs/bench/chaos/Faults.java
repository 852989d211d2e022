package io.kvs.bench.chaos;

import java.time.Duration;
import java.util.List;

/**
 * Injects a planned fault into the cluster: resolves its target to a victim, does the damage,
 * records the moment in the fault's {@link FaultRecord}, and returns how to heal it. Each family
 * has its own class; this one picks it.
 */
final class Faults {
  /** A fault in place, until healed. */
  interface Active {
    /** Undoes the fault (restart, SIGCONT, rules removed, space freed, planned work finished). */
    void heal() throws Exception;
  }

  private final ProcessFaults processes;
  private final NetworkFaults network;
  private final DiskFault disk;
  private final AdminFaults admin;
  private final GarbageFault garbage;

  Faults(ChaosCluster cluster, Cleanup cleanup) {
    this.processes = new ProcessFaults(cluster);
    this.network = new NetworkFaults(cluster, cleanup);
    this.disk = new DiskFault(cluster, cleanup);
    this.admin = new AdminFaults(cluster);
    this.garbage = new GarbageFault(cluster, cleanup);
  }

  Active inject(PlannedFault fault, FaultRecord record) throws Exception {
    return switch (fault.kind()) {
      case SERVER_KILL -> processes.killServer(fault, record);
      case SERVER_PAUSE -> processes.pauseServer(fault, record);
      case MASTER_KILL -> processes.killMaster(fault, record);
      case MASTER_PAUSE -> processes.pauseMaster(fault, record);
      case ZOOKEEPER_CUT -> network.cutFromZooKeeper(fault, record);
      case REPLICATION_CUT -> network.cutReplication(fault, record);
      case DISK_FULL -> disk.fill(fault, record);
      case MOVE -> admin.move(fault, record);
      case DECOMMISSION -> admin.decommission(fault, record);
      case BALANCE -> admin.balance(fault, record);
      case SPLIT -> admin.split(fault, record);
      case MERGE -> admin.merge(fault, record);
      case GARBAGE -> garbage.send(fault, record);
    };
  }

  /** The server a server fault's target names now. */
  static String server(ChaosCluster cluster, Target target) throws Exception {
    return switch (target.role()) {
      case SERVER -> target.server();
      case PRIMARY_OF -> {
        String primary = cluster.region(target.region()).primary();
        if (primary.isEmpty()) {
          throw new IllegalStateException("region " + target.region() + " has no primary");
        }
        yield primary;
      }
      default -> throw new IllegalArgumentException("not a server: " + target);
    };
  }

  /**
   * How long a master fault waits for the election to have the master its target names: a master
   * that lost its ZooKeeper session (a stall of the machine longer than its session timeout) is out
   * of the election until its client has a new session, a moment later.
   */
  static final Duration ELECTION_PATIENCE = Duration.ofSeconds(10);

  /** The master a master fault's target names now (noted in {@code record} if it had to wait). */
  static String master(ChaosCluster cluster, Target target, FaultRecord record) throws Exception {
    if (target.role() == Target.Role.MASTER) {
      return target.server();
    }
    int needed =
        switch (target.role()) {
          case ACTIVE_MASTER -> 1;
          case STANDBY_MASTER -> 2;
          default -> throw new IllegalArgumentException("not a master: " + target);
        };
    long began = System.nanoTime();
    long deadline = began + ELECTION_PATIENCE.toNanos();
    List<String> election = cluster.election();
    while (election.size() < needed && System.nanoTime() < deadline) {
      Thread.sleep(50);
      election = cluster.election();
    }
    if (election.size() < needed) {
      throw new IllegalStateException(
          (needed == 1 ? "no master is elected" : "no master stands by")
              + " within "
              + ELECTION_PATIENCE.toSeconds()
              + " s: "
              + election);
    }
    long waited = (System.nanoTime() - began) / 1_000_000;
    if (waited >= 100) {
      record.note("waited " + waited + " ms for the election to have " + target);
    }
    return election.get(needed - 1);
  }
}
