package io.kvs.master;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.control.HeldRegion;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * Which region the master splits by itself ({@link SplitOptions}), pass by pass, from what each
 * primary's {@code list} reports: its region's size ({@link HeldRegion#bytes}, against the size
 * stepped by how many regions that primary leads, {@link SplitOptions#sizeFor}) and its request
 * counter ({@link HeldRegion#requests}, from which it keeps each region's rate between passes). One
 * region at a time (none while a split request is pending), only a quiet one (the caller's test),
 * and never one created less than a window ago (a region just split, or a new master's first sight
 * of it), so splits never cascade faster than the cluster settles. Pass thread only; its memory
 * holds one entry per region of the map.
 */
final class SplitTriggers {
  /** A region to split, why (for the log), and whether for its load (not its size). */
  record Choice(long regionId, String why, boolean byLoad) {}

  private final SplitOptions options;
  private final LongSupplier nanos;
  private final RegionLoads loads = new RegionLoads();
  private final Map<Long, Long> firstSeen = new HashMap<>();

  /** Per region whose rate is at or above the threshold: since when (nanos). */
  private final Map<Long, Long> hotSince = new HashMap<>();

  SplitTriggers(SplitOptions options, LongSupplier nanos) {
    this.options = options;
    this.nanos = nanos;
  }

  /**
   * The region to split now, if any: the first (by id) over a threshold that is {@code quiet}, with
   * no split request pending ({@code requestPending}) and seen for a window at least.
   */
  Optional<Choice> choose(
      Collection<RegionDescriptor> regions,
      Map<String, Map<Long, HeldRegion>> held,
      boolean requestPending,
      Predicate<RegionDescriptor> quiet) {
    long now = nanos.getAsLong();
    Set<Long> ids = new HashSet<>();
    for (RegionDescriptor region : regions) {
      ids.add(region.id());
    }
    firstSeen.keySet().retainAll(ids);
    hotSince.keySet().retainAll(ids);
    loads.sample(regions, held, now);
    Map<String, Integer> led = new HashMap<>();
    for (RegionDescriptor region : regions) {
      led.merge(region.primary(), 1, Integer::sum);
    }
    Choice chosen = null;
    for (RegionDescriptor region :
        regions.stream().sorted((a, b) -> Long.compare(a.id(), b.id())).toList()) {
      firstSeen.putIfAbsent(region.id(), now);
      HeldRegion primary = held.getOrDefault(region.primary(), Map.of()).get(region.id());
      if (primary == null
          || primary.epoch() != region.epoch()
          || primary.role() != RegionRole.PRIMARY) {
        hotSince.remove(region.id());
        continue;
      }
      double rate = loads.latest(region.id());
      if (options.qps() > 0 && rate >= options.qps()) {
        hotSince.putIfAbsent(region.id(), now);
      } else if (rate >= 0) {
        hotSince.remove(region.id());
      }
      if (chosen != null || requestPending) {
        continue; // one at a time; the rates are still kept up
      }
      String why = null;
      long size = options.sizeFor(led.getOrDefault(region.primary(), 1));
      if (size > 0 && primary.bytes() >= size) {
        why =
            size == options.sizeBytes()
                ? "its primary holds " + primary.bytes() + " bytes (--split-size " + size + ")"
                : String.format(
                    "its primary holds %d bytes (%d while it leads %d regions: --split-first-size"
                        + " %d)",
                    primary.bytes(),
                    size,
                    led.getOrDefault(region.primary(), 1),
                    options.firstSizeBytes());
      } else if (options.qps() > 0
          && hotSince.containsKey(region.id())
          && now - hotSince.get(region.id()) >= options.window().toNanos()) {
        why =
            String.format(
                "its primary served %.0f requests a second for %d ms (--split-qps %d)",
                rate, (now - hotSince.get(region.id())) / 1_000_000, options.qps());
      }
      if (why != null
          && now - firstSeen.get(region.id()) >= options.window().toNanos()
          && quiet.test(region)) {
        chosen = new Choice(region.id(), why, primary.bytes() < size || size == 0);
      }
    }
    return Optional.ofNullable(chosen);
  }
}
