package io.kvs.core.cluster;

import java.util.Objects;

/**
 * A request to split a region ({@code ./kvs admin split}), kept under {@link
 * ClusterPaths#split(long)} until the master has split it (the request goes in the same transaction
 * as the split) or refused it (it records why in {@code refused} and leaves the request for the
 * operator's tool to read and delete).
 *
 * @param key where to split; empty: the region's primary picks its middle by size (or by load)
 * @param refused why the master will not do it, empty while it is pending
 * @param byLoad with an empty key, the primary picks the median of the keys its recent requests
 *     named (a split for load: the master's own when a region serves {@code --split-qps})
 */
public record SplitRequest(byte[] key, String refused, boolean byLoad) {
  public SplitRequest {
    Objects.requireNonNull(key, "key");
    refused = refused == null ? "" : refused;
  }

  /** A request at {@code key} (empty: the middle by size), refused for {@code refused} if any. */
  public SplitRequest(byte[] key, String refused) {
    this(key, refused, false);
  }

  /** A pending request to split at {@code key} (empty: the middle by size). */
  public static SplitRequest at(byte[] key) {
    return new SplitRequest(key, "");
  }

  /** A pending request to split where the region's recent requests split in half. */
  public static SplitRequest forLoad() {
    return new SplitRequest(new byte[0], "", true);
  }

  /** This request, refused for {@code reason}. */
  public SplitRequest refusedFor(String reason) {
    return new SplitRequest(key, reason, byLoad);
  }

  public boolean isRefused() {
    return !refused.isEmpty();
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof SplitRequest r
        && java.util.Arrays.equals(key, r.key)
        && refused.equals(r.refused)
        && byLoad == r.byLoad;
  }

  @Override
  public int hashCode() {
    return 31 * (31 * java.util.Arrays.hashCode(key) + refused.hashCode())
        + Boolean.hashCode(byLoad);
  }
}
