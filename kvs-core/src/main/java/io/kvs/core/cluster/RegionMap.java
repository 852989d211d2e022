package io.kvs.core.cluster;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * An immutable snapshot of the region map: every region in key order, looked up by key or id.
 * Ranges must not overlap; a key in no region (a gap while the map is being written) finds none.
 */
public final class RegionMap {
  private static final RegionMap EMPTY = new RegionMap(List.of());

  private final List<RegionDescriptor> regions; // by start key
  private final Map<Long, RegionDescriptor> byId;

  private RegionMap(List<RegionDescriptor> sorted) {
    this.regions = Collections.unmodifiableList(sorted);
    Map<Long, RegionDescriptor> ids = new HashMap<>();
    for (RegionDescriptor region : sorted) {
      if (ids.put(region.id(), region) != null) {
        throw new IllegalArgumentException("region " + region.id() + " appears twice");
      }
    }
    this.byId = Collections.unmodifiableMap(ids);
  }

  /** The map with no region. */
  public static RegionMap empty() {
    return EMPTY;
  }

  /**
   * The map of {@code regions}.
   *
   * @throws IllegalArgumentException if two regions overlap or share an id
   */
  public static RegionMap of(Collection<RegionDescriptor> regions) {
    List<RegionDescriptor> sorted = new ArrayList<>(regions);
    sorted.sort(Comparator.comparing(RegionDescriptor::start, Keys::compare));
    for (int i = 1; i < sorted.size(); i++) {
      RegionDescriptor before = sorted.get(i - 1);
      if (before.end().length == 0 || Keys.compare(before.end(), sorted.get(i).start()) > 0) {
        throw new IllegalArgumentException(
            "regions " + before.id() + " and " + sorted.get(i).id() + " overlap");
      }
    }
    return new RegionMap(sorted);
  }

  /** Every region, in key order. */
  public List<RegionDescriptor> regions() {
    return regions;
  }

  /** The region with id {@code id}. */
  public Optional<RegionDescriptor> byId(long id) {
    return Optional.ofNullable(byId.get(id));
  }

  /** The region whose range holds {@code key}. */
  public Optional<RegionDescriptor> regionFor(byte[] key) {
    int index = floorIndex(key);
    if (index < 0 || !regions.get(index).contains(key)) {
      return Optional.empty();
    }
    return Optional.of(regions.get(index));
  }

  /**
   * The first region, in key order, holding keys at or after {@code key}: the one containing it,
   * else the next one.
   */
  public Optional<RegionDescriptor> firstFrom(byte[] key) {
    int index = floorIndex(key);
    if (index >= 0 && regions.get(index).contains(key)) {
      return Optional.of(regions.get(index));
    }
    return index + 1 < regions.size() ? Optional.of(regions.get(index + 1)) : Optional.empty();
  }

  /**
   * The region holding the keys just below {@code end} (exclusive; empty: the last key of all) --
   * where a reverse scan down from {@code end} starts: the one whose start is below {@code end} and
   * whose end is at or above it. Empty if no region of the map holds them (a gap).
   */
  public Optional<RegionDescriptor> lastBelow(byte[] end) {
    if (regions.isEmpty()) {
      return Optional.empty();
    }
    if (end.length == 0) {
      RegionDescriptor last = regions.get(regions.size() - 1);
      return last.end().length == 0 ? Optional.of(last) : Optional.empty();
    }
    int low = 0;
    int high = regions.size() - 1;
    int found = -1;
    while (low <= high) {
      int mid = (low + high) >>> 1;
      if (Keys.compare(regions.get(mid).start(), end) < 0) {
        found = mid;
        low = mid + 1;
      } else {
        high = mid - 1;
      }
    }
    if (found < 0) {
      return Optional.empty();
    }
    RegionDescriptor region = regions.get(found);
    return region.end().length == 0 || Keys.compare(end, region.end()) <= 0
        ? Optional.of(region)
        : Optional.empty();
  }

  /**
   * The regions, in key order, whose ranges lie within {@code [start, end)} (an empty end:
   * unbounded) -- what a region of that range was split into.
   */
  public List<RegionDescriptor> within(byte[] start, byte[] end) {
    return regions.stream()
        .filter(
            region ->
                Keys.compare(region.start(), start) >= 0
                    && (end.length == 0
                        || (region.end().length > 0 && Keys.compare(region.end(), end) <= 0)))
        .toList();
  }

  /** Whether the regions cover the whole key space with no gap. */
  public boolean isComplete() {
    if (regions.isEmpty() || regions.get(0).start().length != 0) {
      return false;
    }
    for (int i = 1; i < regions.size(); i++) {
      if (Keys.compare(regions.get(i - 1).end(), regions.get(i).start()) != 0) {
        return false;
      }
    }
    return regions.get(regions.size() - 1).end().length == 0;
  }

  public int size() {
    return regions.size();
  }

  // Index of the last region whose start is <= key, or -1.
  private int floorIndex(byte[] key) {
    int low = 0;
    int high = regions.size() - 1;
    int found = -1;
    while (low <= high) {
      int mid = (low + high) >>> 1;
      if (Keys.compare(regions.get(mid).start(), key) <= 0) {
        found = mid;
        low = mid + 1;
      } else {
        high = mid - 1;
      }
    }
    return found;
  }
}
