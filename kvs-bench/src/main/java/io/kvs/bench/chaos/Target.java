package io.kvs.bench.chaos;

/**
 * Whom a planned fault hits, as the schedule names it: a server by id, or a role that is resolved
 * against the cluster when the fault is injected (the primary of region 3, the active master). The
 * schedule, and so its replay from the same seed, fixes the role; which process holds the role then
 * depends on the faults before.
 *
 * @param role how the victim is found
 * @param server the server or master id for {@link Role#SERVER} and {@link Role#MASTER}
 * @param region the region for {@link Role#PRIMARY_OF}, {@link Role#REPLICA_PAIR}, {@link
 *     Role#MOVE_TO} and {@link Role#REGION}: its position in key order when the fault is injected
 *     (counting from 1, wrapping around), which splits and merges keep meaningful where ids would
 *     not ({@link ChaosCluster#region})
 * @param index which backup of the region for {@link Role#REPLICA_PAIR} (at least {@link
 *     #EVERY_BACKUP}: all of them) and {@link Role#MOVE_TO} (modulo their number)
 */
record Target(Role role, String server, long region, int index) {
  /** A {@link Role#REPLICA_PAIR} index that names every backup of the region. */
  static final int EVERY_BACKUP = 2;

  /** How a victim is found. */
  enum Role {
    /** Region server {@link #server}. */
    SERVER,
    /** The region server leading {@link #region}. */
    PRIMARY_OF,
    /** Master {@link #server}. */
    MASTER,
    /** The active master. */
    ACTIVE_MASTER,
    /** A master standing by. */
    STANDBY_MASTER,
    /** The primary of {@link #region} and its backup number {@link #index}. */
    REPLICA_PAIR,
    /** Region {@link #region}, to be handed to its backup in sync number {@link #index}. */
    MOVE_TO,
    /** Every port of every process. */
    EVERY_PORT,
    /** The cluster as a whole (balance). */
    CLUSTER,
    /** Region {@link #region} itself (split, merge). */
    REGION
  }

  static Target server(String id) {
    return new Target(Role.SERVER, id, 0, 0);
  }

  static Target primaryOf(long region) {
    return new Target(Role.PRIMARY_OF, "", region, 0);
  }

  static Target master(String id) {
    return new Target(Role.MASTER, id, 0, 0);
  }

  static Target activeMaster() {
    return new Target(Role.ACTIVE_MASTER, "", 0, 0);
  }

  static Target standbyMaster() {
    return new Target(Role.STANDBY_MASTER, "", 0, 0);
  }

  static Target replicaPair(long region, int backup) {
    return new Target(Role.REPLICA_PAIR, "", region, backup);
  }

  static Target moveTo(long region, int backup) {
    return new Target(Role.MOVE_TO, "", region, backup);
  }

  static Target everyPort() {
    return new Target(Role.EVERY_PORT, "", 0, 0);
  }

  static Target region(long region) {
    return new Target(Role.REGION, "", region, 0);
  }

  static Target cluster() {
    return new Target(Role.CLUSTER, "", 0, 0);
  }

  @Override
  public String toString() {
    return switch (role) {
      case SERVER, MASTER -> server;
      case PRIMARY_OF -> "primary of region " + region;
      case ACTIVE_MASTER -> "active master";
      case STANDBY_MASTER -> "standby master";
      case REPLICA_PAIR ->
          "region "
              + region
              + ": primary -> "
              + (index >= EVERY_BACKUP ? "every backup" : "backup #" + index);
      case MOVE_TO -> "region " + region + " to backup #" + index;
      case EVERY_PORT -> "every port";
      case CLUSTER -> "cluster";
      case REGION -> "region " + region;
    };
  }
}
