package io.kvs.bench.chaos;

import java.util.Arrays;
import java.util.List;

/** The kinds of fault the campaign injects, by the name the timeline and the JSON use. */
enum FaultKind {
  SERVER_KILL("server-kill", Family.SERVER, "SIGKILL a region server, restart it later"),
  SERVER_PAUSE(
      "server-pause", Family.SERVER, "SIGSTOP a region server past its session timeout, SIGCONT"),
  ZOOKEEPER_CUT(
      "zookeeper-cut",
      Family.SERVER,
      "drop a region server's TCP traffic to ZooKeeper past its session timeout, then heal"),
  REPLICATION_CUT(
      "replication-cut",
      Family.SERVER,
      "drop a primary's TCP traffic to the ports of one or every backup, then heal; some end"
          + " with the primary killed while cut off"),
  DISK_FULL(
      "disk-full",
      Family.SERVER,
      "fill a primary's file system until it refuses a write for lack of space, then free it"),
  MASTER_KILL("master-kill", Family.MASTER, "SIGKILL a master (active or standby), restart it"),
  MASTER_PAUSE("master-pause", Family.MASTER, "SIGSTOP a master past its session timeout, SIGCONT"),
  MOVE("move", Family.ADMIN, "hand a region's primary over to a backup (./kvs admin move)"),
  DECOMMISSION(
      "decommission",
      Family.ADMIN,
      "drain a region server (./kvs admin decommission), then recommission it"),
  BALANCE("balance", Family.ADMIN, "even out leadership (./kvs admin balance)"),
  SPLIT("split", Family.ADMIN, "split a region in two at its middle by size (./kvs admin split)"),
  MERGE(
      "merge",
      Family.ADMIN,
      "merge two neighbours, held by the same servers where some are (./kvs admin merge)"),
  GARBAGE(
      "garbage",
      Family.STRANGER,
      "random bytes, cut frames, huge length prefixes and silent connections on every port");

  /** What a fault disturbs; at most one fault of a family runs at a time. */
  enum Family {
    /** One region server out of the picture: at most one at a time, so RF 3 always holds. */
    SERVER,
    /** One master. */
    MASTER,
    /** A planned change through the admin commands. */
    ADMIN,
    /** A stranger on the network. */
    STRANGER
  }

  final String label;
  final Family family;
  final String description;

  FaultKind(String label, Family family, String description) {
    this.label = label;
    this.family = family;
    this.description = description;
  }

  /** Every kind, in declaration order. */
  static List<FaultKind> all() {
    return Arrays.asList(values());
  }

  /** The kind named {@code label}. */
  static FaultKind of(String label) {
    for (FaultKind kind : values()) {
      if (kind.label.equals(label)) {
        return kind;
      }
    }
    throw new IllegalArgumentException("no fault kind " + label);
  }
}
