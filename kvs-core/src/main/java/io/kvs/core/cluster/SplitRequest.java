package io.kvs.core.cluster;

import java.util.Objects;

/**
 * A request to split a region ({@code ./kvs admin split}), kept under {@link
 * ClusterPaths#split(long)} until the master has split it (the request goes in the same transaction
 * as the split) or refused it (it records why in {@code refused} and leaves the request for the
 * operator's tool to read and delete).
 *
 * @param key where to split; empty: the region's primary picks its middle by size
 * @param refused why the master will not do it, empty while it is pending
 */
public record SplitRequest(byte[] key, String refused) {
  public SplitRequest {
    Objects.requireNonNull(key, "key");
    refused = refused == null ? "" : refused;
  }

  /** A pending request to split at {@code key} (empty: the median). */
  public static SplitRequest at(byte[] key) {
    return new SplitRequest(key, "");
  }

  /** This request, refused for {@code reason}. */
  public SplitRequest refusedFor(String reason) {
    return new SplitRequest(key, reason);
  }

  public boolean isRefused() {
    return !refused.isEmpty();
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof SplitRequest r
        && java.util.Arrays.equals(key, r.key)
        && refused.equals(r.refused);
  }

  @Override
  public int hashCode() {
    return 31 * java.util.Arrays.hashCode(key) + refused.hashCode();
  }
}
