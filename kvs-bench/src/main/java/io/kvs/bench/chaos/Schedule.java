package io.kvs.bench.chaos;

import io.kvs.bench.chaos.FaultKind.Family;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The seeded schedule of faults: steps drawn one after another from one {@link SplittableRandom},
 * so the same seed gives the same steps (kinds, targets, durations, overlaps, pauses) whatever the
 * cluster does meanwhile. Kinds come in rounds: each round is every kind once, in a shuffled order,
 * so a run of N rounds has every kind N times. About a quarter of the steps get an overlapping
 * fault of another family (a master fault while a server is away, a server fault while a master is,
 * garbage bytes during anything). The quick profile is one round with shorter faults and two
 * overlaps.
 */
final class Schedule {
  /** How much of the schedule's faults draw on the cluster's layout. */
  record Layout(
      List<String> servers,
      List<String> masters,
      int regions,
      long sessionTimeoutMillis,
      long masterSessionTimeoutMillis) {}

  private static final double OVERLAP_PROBABILITY = 0.25;
  private static final int QUICK_OVERLAPS = 2;

  private final SplittableRandom random;
  private final boolean quick;
  private final Layout layout;
  private final List<Step> steps = new ArrayList<>();
  private final Deque<FaultKind> round = new ArrayDeque<>();
  private final List<Integer> quickOverlaps = new ArrayList<>();

  Schedule(long seed, boolean quick, Layout layout) {
    this.random = new SplittableRandom(seed);
    this.quick = quick;
    this.layout = layout;
    if (quick) {
      while (quickOverlaps.size() < QUICK_OVERLAPS) {
        int index = random.nextInt(FaultKind.values().length);
        if (!quickOverlaps.contains(index)) {
          quickOverlaps.add(index);
        }
      }
    }
  }

  /** Steps in the quick profile (every kind once); unbounded (0) for the full one. */
  int length() {
    return quick ? FaultKind.values().length : 0;
  }

  /** Step {@code index} (from 0), drawing the steps before it first if need be. */
  synchronized Step step(int index) {
    if (quick && index >= length()) {
      throw new IndexOutOfBoundsException("the quick schedule has " + length() + " steps");
    }
    while (steps.size() <= index) {
      steps.add(draw(steps.size()));
    }
    return steps.get(index);
  }

  private Step draw(int index) {
    if (round.isEmpty()) {
      List<FaultKind> kinds = new ArrayList<>(FaultKind.all());
      for (int i = kinds.size() - 1; i > 0; i--) { // Fisher-Yates
        int j = random.nextInt(i + 1);
        kinds.set(i, kinds.set(j, kinds.get(i)));
      }
      round.addAll(kinds);
    }
    PlannedFault main = fault(round.removeFirst());
    PlannedFault overlap = null;
    long delay = 0;
    boolean overlaps =
        quick ? quickOverlaps.contains(index) : random.nextDouble() < OVERLAP_PROBABILITY;
    if (overlaps) {
      List<FaultKind> candidates =
          main.kind().family == Family.MASTER
              ? List.of(
                  FaultKind.SERVER_KILL,
                  FaultKind.SERVER_PAUSE,
                  FaultKind.ZOOKEEPER_CUT,
                  FaultKind.GARBAGE)
              : main.kind() == FaultKind.GARBAGE
                  ? List.of(FaultKind.MASTER_KILL, FaultKind.MASTER_PAUSE)
                  : List.of(FaultKind.MASTER_KILL, FaultKind.MASTER_PAUSE, FaultKind.GARBAGE);
      overlap = fault(candidates.get(random.nextInt(candidates.size())));
      long room = main.holdMillis() > 0 ? Math.min(main.holdMillis(), 3_000) : 1_000;
      delay = random.nextLong(room + 1);
    }
    long gap = quick ? between(1_000, 2_000) : between(3_000, 12_000);
    return new Step(index + 1, main, overlap, delay, gap);
  }

  private PlannedFault fault(FaultKind kind) {
    long session = layout.sessionTimeoutMillis();
    Target target =
        switch (kind) {
          case SERVER_KILL, SERVER_PAUSE, ZOOKEEPER_CUT, DECOMMISSION -> serverTarget();
          case DISK_FULL -> Target.primaryOf(region());
          case REPLICATION_CUT -> Target.replicaPair(region(), random.nextInt(2));
          case MASTER_KILL, MASTER_PAUSE -> masterTarget();
          case MOVE -> Target.moveTo(region(), random.nextInt(2));
          case BALANCE -> Target.cluster();
          case GARBAGE -> Target.everyPort();
        };
    long hold =
        switch (kind) {
          case SERVER_KILL -> between(1_000, 6_000);
          case SERVER_PAUSE -> session + (quick ? between(1_000, 2_000) : between(1_000, 4_000));
          case ZOOKEEPER_CUT -> session + (quick ? between(1_000, 2_000) : between(1_000, 5_000));
          case REPLICATION_CUT -> quick ? between(2_000, 4_000) : between(2_000, 12_000);
          case DISK_FULL -> quick ? between(1_000, 2_000) : between(1_000, 5_000);
          case MASTER_KILL -> quick ? between(1_000, 3_000) : between(1_000, 8_000);
          case MASTER_PAUSE ->
              layout.masterSessionTimeoutMillis()
                  + (quick ? between(1_000, 1_500) : between(1_000, 3_000));
          case DECOMMISSION -> quick ? between(0, 1_000) : between(0, 5_000);
          case GARBAGE -> quick ? between(2_000, 3_000) : between(2_000, 6_000);
          case MOVE, BALANCE -> 0;
        };
    return new PlannedFault(kind, target, hold, random.nextLong());
  }

  /** A server by name (two in five) or the primary of a region (three in five). */
  private Target serverTarget() {
    return random.nextInt(5) < 2
        ? Target.server(layout.servers().get(random.nextInt(layout.servers().size())))
        : Target.primaryOf(region());
  }

  /** The active master (three in five), the standby, or a master by name. */
  private Target masterTarget() {
    int draw = random.nextInt(5);
    return draw < 3
        ? Target.activeMaster()
        : draw == 3
            ? Target.standbyMaster()
            : Target.master(layout.masters().get(random.nextInt(layout.masters().size())));
  }

  private long region() {
    return 1 + random.nextInt(layout.regions());
  }

  private long between(long from, long to) {
    return from + random.nextLong(to - from);
  }
}
