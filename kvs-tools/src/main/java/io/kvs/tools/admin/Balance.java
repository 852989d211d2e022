package io.kvs.tools.admin;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Which primaries to move so that leadership is spread evenly ({@code ./kvs admin balance}): after
 * a server restarts it rejoins its groups as a backup, so the others lead everything until
 * primaries are handed back. Only handovers to backups in sync are planned (the replicas stay where
 * they are); a server leads at most {@code ceil(regions / servers)} regions afterwards where the
 * groups allow it.
 */
final class Balance {
  /** A planned handover of region {@code regionId}'s primary to {@code target}. */
  record Move(long regionId, String from, String target) {}

  private Balance() {}

  /**
   * The handovers that even out leadership among {@code live} servers that are not {@code
   * decommissioned}, considering only regions that are open.
   */
  static List<Move> plan(List<RegionDescriptor> regions, Set<String> live, Set<String> excluded) {
    Map<String, Integer> leads = new TreeMap<>();
    live.stream().filter(server -> !excluded.contains(server)).forEach(s -> leads.put(s, 0));
    if (leads.isEmpty()) {
      return List.of();
    }
    regions.forEach(region -> leads.computeIfPresent(region.primary(), (s, n) -> n + 1));
    int most = (regions.size() + leads.size() - 1) / leads.size();
    List<Move> moves = new ArrayList<>();
    for (RegionDescriptor region : regions) {
      Integer count = leads.get(region.primary());
      if (region.state() != RegionState.OPEN || (count != null && count <= most)) {
        continue;
      }
      String target =
          region.backupsInSync().stream()
              .filter(leads::containsKey)
              .filter(backup -> leads.get(backup) < most)
              .min(Comparator.comparing(leads::get))
              .orElse(null);
      if (target == null) {
        continue;
      }
      moves.add(new Move(region.id(), region.primary(), target));
      leads.computeIfPresent(region.primary(), (s, n) -> n - 1);
      leads.merge(target, 1, Integer::sum);
    }
    return moves;
  }
}
