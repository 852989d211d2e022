package io.kvs.core.cluster;

/**
 * Where a region merged from two neighbours comes from, until every member holds it: the lower
 * region ({@code left}, whose range it starts with) and the upper one ({@code right}). A member
 * that does not hold it yet makes it from its copies of both (engine regions {@code region-<left>}
 * and {@code region-<right>}).
 *
 * @param left the region merged whose range comes first
 * @param right the region merged whose range comes next
 */
public record MergeOrigin(long left, long right) implements RegionOrigin {
  public MergeOrigin {
    if (left <= 0 || right <= 0 || left == right) {
      throw new IllegalArgumentException("bad merge origin: left " + left + ", right " + right);
    }
  }

  @Override
  public boolean names(long regionId) {
    return regionId == left || regionId == right;
  }
}
