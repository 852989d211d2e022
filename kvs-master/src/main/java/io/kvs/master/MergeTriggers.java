package io.kvs.master;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.control.HeldRegion;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiPredicate;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * Which two neighbouring regions the master merges by itself ({@link MergeOptions}), pass by pass,
 * from what each primary's {@code list} reports: both smaller than {@code --merge-size}, together
 * less than half the size at which the merged region would split (so merges and splits never undo
 * each other), both cold (their requests together below {@link MergeOptions#coldQps}), both seen
 * for {@link MergeOptions#rest}, held by the same servers (whichever leads) or under send-index by
 * any ({@link Merges} gives them one group first), both quiet (open, whole) and not asked for
 * already, and no load split of their range in the last hour. One pair at a time, none while a
 * split or merge is pending. Pass thread only; its memory holds one entry per region of the map.
 */
final class MergeTriggers {
  /** Two regions to merge (the lower's id first), and why (for the log). */
  record Choice(long leftId, long rightId, String why) {}

  private final MergeOptions options;
  private final SplitOptions splitOptions;
  private final LongSupplier nanos;
  private final RegionLoads loads = new RegionLoads();
  private final Map<Long, Long> firstSeen = new HashMap<>();

  MergeTriggers(MergeOptions options, SplitOptions splitOptions, LongSupplier nanos) {
    this.options = options;
    this.splitOptions = splitOptions;
    this.nanos = nanos;
  }

  /**
   * The pair to merge now, if any: the first (by key) that passes every rule, with nothing {@code
   * pending}, both {@code quiet}, and no load split of their range lately ({@code loadSplit}:
   * start, end of the merged range); held by the same servers unless {@code replicasMove} (under
   * send-index a replica can be moved to give both one group).
   */
  Optional<Choice> choose(
      Collection<RegionDescriptor> regions,
      Map<String, Map<Long, HeldRegion>> held,
      boolean pending,
      Predicate<RegionDescriptor> quiet,
      BiPredicate<byte[], byte[]> loadSplit,
      boolean replicasMove) {
    long now = nanos.getAsLong();
    Set<Long> ids = new HashSet<>();
    regions.forEach(region -> ids.add(region.id()));
    firstSeen.keySet().retainAll(ids);
    regions.forEach(region -> firstSeen.putIfAbsent(region.id(), now));
    loads.sample(regions, held, now);
    if (options.sizeBytes() == 0 || pending) {
      return Optional.empty();
    }
    Map<String, Integer> led = new HashMap<>();
    regions.forEach(region -> led.merge(region.primary(), 1, Integer::sum));
    List<RegionDescriptor> sorted =
        regions.stream()
            .sorted(Comparator.comparing(RegionDescriptor::start, Arrays::compareUnsigned))
            .toList();
    for (int i = 0; i + 1 < sorted.size(); i++) {
      RegionDescriptor left = sorted.get(i);
      RegionDescriptor right = sorted.get(i + 1);
      if (left.end().length == 0 || !Arrays.equals(left.end(), right.start())) {
        continue;
      }
      if ((!replicasMove && !left.sameMembersAs(right)) || left.primary().isEmpty()) {
        continue;
      }
      long leftBytes = bytesOf(left, held);
      long rightBytes = bytesOf(right, held);
      if (leftBytes < 0 || rightBytes < 0) {
        continue; // a primary did not report it at its epoch
      }
      int ledAfter = Math.max(1, led.getOrDefault(left.primary(), 2) - 1);
      long splitsAt = splitOptions.sizeFor(ledAfter);
      double qps = Math.max(0, loads.smoothed(left.id())) + Math.max(0, loads.smoothed(right.id()));
      boolean small =
          leftBytes < options.sizeBytes()
              && rightBytes < options.sizeBytes()
              && (splitsAt == 0 || leftBytes + rightBytes < splitsAt / 2);
      boolean rested =
          now - firstSeen.get(left.id()) >= options.rest().toNanos()
              && now - firstSeen.get(right.id()) >= options.rest().toNanos();
      if (small
          && rested
          && qps < options.coldQps()
          && quiet.test(left)
          && quiet.test(right)
          && !loadSplit.test(left.start(), right.end())) {
        return Optional.of(
            new Choice(
                left.id(),
                right.id(),
                String.format(
                    "%d and %d bytes (--merge-size %d; %d together would split at %d), %.0f"
                        + " requests a second",
                    leftBytes,
                    rightBytes,
                    options.sizeBytes(),
                    leftBytes + rightBytes,
                    splitsAt,
                    qps)));
      }
    }
    return Optional.empty();
  }

  /** What {@code region}'s primary reports it holds at its epoch, or -1. */
  static long bytesOf(RegionDescriptor region, Map<String, Map<Long, HeldRegion>> held) {
    HeldRegion primary = held.getOrDefault(region.primary(), Map.of()).get(region.id());
    if (primary == null
        || primary.epoch() != region.epoch()
        || primary.role() != RegionRole.PRIMARY) {
      return -1;
    }
    return primary.bytes();
  }
}
