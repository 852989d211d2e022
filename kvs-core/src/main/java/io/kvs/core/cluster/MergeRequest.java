package io.kvs.core.cluster;

/**
 * A request to merge a region with its neighbour above ({@code ./kvs admin merge}), kept under
 * {@link ClusterPaths#merge(long)} (the lower region's id) until the master has merged them (the
 * request goes in the same transaction as the merge) or refused it (it records why in {@code
 * refused} and leaves the request for the operator's tool to read and delete).
 *
 * @param refused why the master will not do it, empty while it is pending
 */
public record MergeRequest(String refused) {
  /** A pending request. */
  public static final MergeRequest PENDING = new MergeRequest("");

  public MergeRequest {
    refused = refused == null ? "" : refused;
  }

  /** This request, refused for {@code reason}. */
  public MergeRequest refusedFor(String reason) {
    return new MergeRequest(reason);
  }

  public boolean isRefused() {
    return !refused.isEmpty();
  }
}
