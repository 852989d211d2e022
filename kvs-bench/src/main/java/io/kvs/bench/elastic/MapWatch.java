package io.kvs.bench.elastic;

import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.Supplier;

/**
 * Samples the region map (a client's cache of ZooKeeper's) every {@link #PERIOD_MILLIS}: the number
 * of regions in each second, and each change the benchmark measures a gap around -- a split (a
 * region gone, two or more in its range new), a merge, a handover (a region's primary changed) --
 * at the moment the sample first showed it.
 */
final class MapWatch {
  static final long PERIOD_MILLIS = 20;

  enum Kind {
    SPLIT,
    MERGE,
    HANDOVER
  }

  /**
   * A change to the key range [{@code start}, {@code end}), dated {@code atNanos} (since the log's
   * origin), recognised in the sample of {@code seenNanos}.
   */
  record Change(
      Kind kind,
      long atNanos,
      long seenNanos,
      long region,
      byte[] start,
      byte[] end,
      String what) {}

  private final Supplier<RegionMap> source;
  private final OperationLog clock;
  private final AtomicIntegerArray regionsPerSecond =
      new AtomicIntegerArray(OperationLog.SECONDS_MAX);
  private final List<Change> changes = new ArrayList<>();
  // The sampler thread's alone: when each region id was first sampled; the regions gone that no
  // split or merge explains yet, and when each went.
  private final Map<Long, Long> firstSeen = new HashMap<>();
  private final Map<Long, RegionDescriptor> unexplained = new HashMap<>();
  private final Map<Long, Long> goneAt = new HashMap<>();
  private final Thread thread;
  private volatile boolean stop;
  private volatile RegionMap latest;

  MapWatch(Supplier<RegionMap> source, OperationLog clock) {
    this.source = source;
    this.clock = clock;
    this.latest = source.get();
    this.thread = new Thread(this::run, "elastic-map-watch");
    thread.setDaemon(true);
    thread.start();
  }

  /** The map as last sampled. */
  RegionMap latest() {
    return latest;
  }

  /** The changes seen so far, in order. */
  synchronized List<Change> changes() {
    return List.copyOf(changes);
  }

  /** The regions in each second up to {@code seconds} (the last sample's count in it). */
  double[] regionsPerSecond(int seconds) {
    double[] counts = new double[Math.min(seconds, OperationLog.SECONDS_MAX)];
    int last = 1;
    for (int i = 0; i < counts.length; i++) {
      int value = regionsPerSecond.get(i);
      last = value > 0 ? value : last;
      counts[i] = last;
    }
    return counts;
  }

  private void run() {
    RegionMap previous = latest;
    while (!stop) {
      try {
        Thread.sleep(PERIOD_MILLIS); // sampling a cache: no event to wait on for its changes
      } catch (InterruptedException e) {
        return;
      }
      RegionMap current = source.get();
      long at = clock.now();
      current.regions().forEach(region -> firstSeen.putIfAbsent(region.id(), at));
      int second = (int) (at / 1_000_000_000L);
      if (second < OperationLog.SECONDS_MAX) {
        regionsPerSecond.set(second, current.size());
      }
      if (current != previous) {
        List<Change> seen = compare(previous, current, at, firstSeen, unexplained, goneAt);
        synchronized (this) {
          changes.addAll(seen);
        }
      }
      latest = current;
      previous = current;
    }
  }

  /**
   * The splits, merges and handovers between two samples, the later taken at {@code at}. The cache
   * applies a commit's changes one at a time, so a sample may show the parent gone and no daughter
   * yet, or one daughter alone: a region gone that nothing explains waits in {@code unexplained}
   * (by id, with when it went in {@code goneAt}) until its daughters or its merged region appear. A
   * region made by a split or a merge has an id above those it was made from, so the regions above
   * a gone one inside its range are its daughters. A split or merge is dated when its first region
   * went, or its first daughter was seen ({@code firstSeen}, by id), whichever came first.
   */
  static List<Change> compare(
      RegionMap before,
      RegionMap after,
      long at,
      Map<Long, Long> firstSeen,
      Map<Long, RegionDescriptor> unexplained,
      Map<Long, Long> goneAt) {
    Map<Long, RegionDescriptor> old = new HashMap<>();
    before.regions().forEach(region -> old.put(region.id(), region));
    Map<Long, RegionDescriptor> now = new HashMap<>();
    after.regions().forEach(region -> now.put(region.id(), region));
    for (RegionDescriptor region : before.regions()) {
      if (!now.containsKey(region.id())) {
        unexplained.put(region.id(), region);
        goneAt.putIfAbsent(region.id(), at);
      }
    }
    List<Change> seen = new ArrayList<>();
    for (RegionDescriptor gone : List.copyOf(unexplained.values())) {
      if (now.containsKey(gone.id())) {
        unexplained.remove(gone.id()); // back (a sample of a half-applied change): nothing to say
        continue;
      }
      List<RegionDescriptor> daughters =
          after.regions().stream()
              .filter(region -> region.id() > gone.id() && within(region, gone))
              .toList();
      if (!daughters.isEmpty()) {
        long first =
            daughters.stream()
                .mapToLong(daughter -> firstSeen.getOrDefault(daughter.id(), at))
                .min()
                .orElse(at);
        seen.add(
            new Change(
                Kind.SPLIT,
                Math.min(first, goneAt.getOrDefault(gone.id(), at)),
                at,
                gone.id(),
                gone.start(),
                gone.end(),
                "region " + gone.id() + " into " + daughters.stream().map(r -> r.id()).toList()));
        unexplained.remove(gone.id());
      }
    }
    for (RegionDescriptor made : after.regions()) {
      List<RegionDescriptor> merged =
          unexplained.values().stream()
              .filter(region -> region.id() < made.id() && within(region, made))
              .sorted(java.util.Comparator.comparingLong(RegionDescriptor::id))
              .toList();
      if (!merged.isEmpty()) {
        seen.add(
            new Change(
                Kind.MERGE,
                merged.stream().mapToLong(r -> goneAt.getOrDefault(r.id(), at)).min().orElse(at),
                at,
                made.id(),
                made.start(),
                made.end(),
                "regions " + merged.stream().map(r -> r.id()).toList() + " into " + made.id()));
        merged.forEach(region -> unexplained.remove(region.id()));
      }
    }
    for (RegionDescriptor region : after.regions()) {
      RegionDescriptor was = old.get(region.id());
      if (was != null
          && !was.primary().isEmpty()
          && !region.primary().isEmpty()
          && !was.primary().equals(region.primary())) {
        seen.add(
            new Change(
                Kind.HANDOVER,
                at,
                at,
                region.id(),
                region.start(),
                region.end(),
                "region " + region.id() + " from " + was.primary() + " to " + region.primary()));
      }
    }
    return seen;
  }

  /** Whether {@code inner}'s range lies inside {@code outer}'s (an empty end is unbounded). */
  private static boolean within(RegionDescriptor inner, RegionDescriptor outer) {
    boolean fromStart = Keys.compare(inner.start(), outer.start()) >= 0;
    boolean toEnd =
        outer.end().length == 0
            || (inner.end().length > 0 && Keys.compare(inner.end(), outer.end()) <= 0);
    return fromStart && toEnd;
  }

  /** Stops sampling and waits for the sampler. */
  void stop() throws InterruptedException {
    stop = true;
    thread.join(10_000);
  }
}
