package io.kvs.core.cluster;

/**
 * Where a cluster's metadata lives in ZooKeeper: everything under {@code /kvs/<cluster>}.
 *
 * <pre>
 * /kvs/&lt;cluster&gt;/config          persistent  ClusterConfig (JSON), written once at bootstrap
 * /kvs/&lt;cluster&gt;/servers/&lt;id&gt;    ephemeral   ServerInfo (JSON), one per live region server
 * /kvs/&lt;cluster&gt;/masters         Curator LeaderLatch participants (ephemeral sequential)
 * /kvs/&lt;cluster&gt;/master-http/&lt;id&gt; ephemeral MasterAddress (JSON), each master's status page
 * /kvs/&lt;cluster&gt;/regions/&lt;id&gt;    persistent  RegionDescriptor (JSON); changed only by the active
 *                               master, with versioned writes
 * /kvs/&lt;cluster&gt;/admin/moves/&lt;region&gt;            persistent  MoveRequest (JSON): an operator
 *                               asks for the region's primary to move; the master deletes it once
 *                               done, or records why it refused
 * /kvs/&lt;cluster&gt;/admin/decommissioned/&lt;id&gt;  persistent  (empty): the server is being drained;
 *                               the master moves every replica off it and places none there
 * /kvs/&lt;cluster&gt;/admin/balancer-off           persistent  (empty): the master's balancer makes
 *                               no move ({@code ./kvs admin balancer off}) until it is deleted
 * /kvs/&lt;cluster&gt;/admin/splits/&lt;region&gt;           persistent  SplitRequest (JSON): an operator
 *                               asks for the region to split; the master deletes it with the split,
 *                               or records why it refused
 * /kvs/&lt;cluster&gt;/admin/merges/&lt;region&gt;           persistent  MergeRequest (JSON): an operator
 *                               asks for the region to merge with its neighbour above; the master
 *                               deletes it with the merge, or records why it refused
 * /kvs/&lt;cluster&gt;/next-region-id   persistent  the id the next new region takes (decimal): ids of
 *                               regions split or merged away are never used again
 * </pre>
 */
public final class ClusterPaths {
  private final String root;

  public ClusterPaths(String cluster) {
    if (cluster == null || !cluster.matches("[A-Za-z0-9_.-]+")) {
      throw new IllegalArgumentException("cluster name must be [A-Za-z0-9_.-]+: " + cluster);
    }
    this.root = "/kvs/" + cluster;
  }

  public String root() {
    return root;
  }

  public String config() {
    return root + "/config";
  }

  public String servers() {
    return root + "/servers";
  }

  public String server(String id) {
    return servers() + "/" + id;
  }

  public String masters() {
    return root + "/masters";
  }

  /** Where each running master publishes its operator HTTP address ({@link MasterAddress}). */
  public String masterHttp() {
    return root + "/master-http";
  }

  public String masterHttp(String id) {
    return masterHttp() + "/" + id;
  }

  public String regions() {
    return root + "/regions";
  }

  public String region(long id) {
    return regions() + "/" + String.format("%08d", id);
  }

  /** Operators' requests to the master ({@code ./kvs admin}). */
  public String admin() {
    return root + "/admin";
  }

  /** Requests to move a region's primary, one child per region. */
  public String moves() {
    return admin() + "/moves";
  }

  public String move(long regionId) {
    return moves() + "/" + String.format("%08d", regionId);
  }

  /** Servers being decommissioned, one child per server id. */
  public String decommissioned() {
    return admin() + "/decommissioned";
  }

  public String decommissioned(String serverId) {
    return decommissioned() + "/" + serverId;
  }

  /** Requests to split a region, one child per region. */
  public String splits() {
    return admin() + "/splits";
  }

  public String split(long regionId) {
    return splits() + "/" + String.format("%08d", regionId);
  }

  /** Requests to merge a region with its neighbour above, one child per lower region. */
  public String merges() {
    return admin() + "/merges";
  }

  public String merge(long regionId) {
    return merges() + "/" + String.format("%08d", regionId);
  }

  /** The id the next region created by a split or a merge takes (decimal text). */
  public String nextRegionId() {
    return root + "/next-region-id";
  }

  /** Present: the master's balancer is switched off for the whole cluster. */
  public String balancerOff() {
    return admin() + "/balancer-off";
  }

  /** The region id a child name of {@link #regions()} stands for. */
  public static long regionIdOf(String childName) {
    return Long.parseLong(childName);
  }
}
