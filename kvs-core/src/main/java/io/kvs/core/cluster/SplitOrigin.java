package io.kvs.core.cluster;

/**
 * Where a region split from another comes from, until every member holds it: its parent's id and
 * its sibling's. A member that does not hold the region yet splits its copy of the parent (engine
 * region {@code region-<parent>}) into both daughters at once, at the key between them: the lower
 * daughter's end, the upper daughter's start; the lower daughter has the lower id.
 *
 * @param parent the region split
 * @param sibling the other daughter
 */
public record SplitOrigin(long parent, long sibling) implements RegionOrigin {
  public SplitOrigin {
    if (parent <= 0 || sibling <= 0 || parent == sibling) {
      throw new IllegalArgumentException(
          "bad split origin: parent " + parent + ", sibling " + sibling);
    }
  }

  @Override
  public boolean names(long regionId) {
    return regionId == parent || regionId == sibling;
  }
}
