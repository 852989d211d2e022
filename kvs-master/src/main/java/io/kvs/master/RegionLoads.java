package io.kvs.master;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.control.HeldRegion;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Each region's requests a second, from the counter its primary reports in {@code list} ({@link
 * HeldRegion#requests}), sampled pass by pass at least {@link #SAMPLE_NANOS} apart: the latest
 * sample's rate, and a smoothed one (each new sample weighs half) that carries over a change of
 * primary. What the balancer weighs leadership by and what splits by load watch. One entry per
 * region of the map; not thread-safe (the pass thread).
 */
final class RegionLoads {
  /** The shortest time between two samples of a region's requests that yields a rate. */
  static final long SAMPLE_NANOS = 1_000_000_000L;

  /**
   * @param latest the rate between the last two samples of this primary; negative while none is
   *     known (a new primary, or a counter that went back: the region was opened again)
   */
  private record Load(
      String primary, long requests, long at, double smoothed, boolean rated, double latest) {}

  private final Map<Long, Load> loads = new HashMap<>();

  /** Takes each primary's counter into its region's rates, at {@code now} (nanos). */
  void sample(
      Collection<RegionDescriptor> regions, Map<String, Map<Long, HeldRegion>> held, long now) {
    Set<Long> present = new HashSet<>();
    for (RegionDescriptor region : regions) {
      present.add(region.id());
      HeldRegion holds = held.getOrDefault(region.primary(), Map.of()).get(region.id());
      if (holds == null || holds.role() != RegionRole.PRIMARY) {
        continue;
      }
      Load last = loads.get(region.id());
      if (last == null
          || !last.primary().equals(region.primary())
          || holds.requests() < last.requests()) {
        // New here (or its counter started over): the smoothed rate goes on until a new one is
        // known; no latest one.
        loads.put(
            region.id(),
            new Load(
                region.primary(),
                holds.requests(),
                now,
                last == null ? 0 : last.smoothed(),
                last != null && last.rated(),
                -1));
        continue;
      }
      long elapsed = now - last.at();
      if (elapsed < SAMPLE_NANOS) {
        continue;
      }
      double rate = (holds.requests() - last.requests()) * 1e9 / elapsed;
      double smoothed = last.rated() ? (last.smoothed() + rate) / 2 : rate;
      loads.put(
          region.id(), new Load(region.primary(), holds.requests(), now, smoothed, true, rate));
    }
    loads.keySet().retainAll(present);
  }

  /** Region {@code id}'s smoothed rate (0: none known). */
  double smoothed(long id) {
    Load load = loads.get(id);
    return load == null ? 0 : load.smoothed();
  }

  /** Region {@code id}'s latest rate (negative: none known). */
  double latest(long id) {
    Load load = loads.get(id);
    return load == null ? -1 : load.latest();
  }
}
