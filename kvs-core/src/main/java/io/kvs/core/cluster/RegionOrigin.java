package io.kvs.core.cluster;

/**
 * Where a region made by a split or a merge comes from, until the master records it {@code OPEN}
 * (every member holds it): what a member that does not hold it yet makes it from, out of its own
 * copies.
 */
public sealed interface RegionOrigin permits SplitOrigin, MergeOrigin {
  /** Whether {@code regionId} is one of the regions this origin names. */
  boolean names(long regionId);
}
