package io.kvs.core.cluster;

import java.util.Objects;

/**
 * An operator's request to move a region's primary to another member of its group ({@code ./kvs
 * admin move}), kept under {@link ClusterPaths#move(long)} until the master has done it (it then
 * deletes the request) or refused it (it records why in {@code refused} and leaves the request for
 * the operator's tool to read and delete).
 *
 * @param to the member that should become the primary
 * @param refused why the master will not do it, empty while it is pending
 */
public record MoveRequest(String to, String refused) {
  public MoveRequest {
    Objects.requireNonNull(to, "to");
    refused = refused == null ? "" : refused;
  }

  /** A pending request. */
  public static MoveRequest to(String server) {
    return new MoveRequest(server, "");
  }

  /** This request, refused for {@code reason}. */
  public MoveRequest refusedFor(String reason) {
    return new MoveRequest(to, reason);
  }

  public boolean isRefused() {
    return !refused.isEmpty();
  }
}
