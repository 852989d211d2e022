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

  /**
   * How long a primary's stream to a backup that takes no write may stall before it fails and the
   * master reopens the region without waiting on that backup (the native ReplicatorOptions
   * stall_timeout).
   */
  static final long REPLICATION_STALL_MILLIS = 2_000;

  /**
   * The longest a primary cut off from every backup is held before it is killed: well before the
   * stall, and short, since the hold adds to the unavailability of the kill's recovery.
   */
  static final long CUT_THEN_KILL_MILLIS = 1_000;

  private final SplittableRandom random;
  private final boolean quick;
  private final List<FaultKind> kinds;
  private final Layout layout;
  private final List<Step> steps = new ArrayList<>();
  private final Deque<FaultKind> round = new ArrayDeque<>();
  private final List<Integer> quickOverlaps = new ArrayList<>();

  Schedule(long seed, boolean quick, List<FaultKind> kinds, Layout layout) {
    if (kinds.isEmpty()) {
      throw new IllegalArgumentException("a schedule needs a kind of fault");
    }
    this.random = new SplittableRandom(seed);
    this.quick = quick;
    this.kinds = List.copyOf(kinds);
    this.layout = layout;
    if (quick) {
      while (quickOverlaps.size() < Math.min(QUICK_OVERLAPS, kinds.size())) {
        int index = random.nextInt(kinds.size());
        if (!quickOverlaps.contains(index)) {
          quickOverlaps.add(index);
        }
      }
    }
  }

  /** Steps in the quick profile (every kind once); unbounded (0) for the full one. */
  int length() {
    return quick ? kinds.size() : 0;
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
      List<FaultKind> shuffled = new ArrayList<>(kinds);
      for (int i = shuffled.size() - 1; i > 0; i--) { // Fisher-Yates
        int j = random.nextInt(i + 1);
        shuffled.set(i, shuffled.set(j, shuffled.get(i)));
      }
      round.addAll(shuffled);
    }
    PlannedFault main = fault(round.removeFirst());
    PlannedFault overlap = null;
    long delay = 0;
    boolean overlaps =
        quick ? quickOverlaps.contains(index) : random.nextDouble() < OVERLAP_PROBABILITY;
    List<FaultKind> candidates = new ArrayList<>(overlapping(main.kind()));
    candidates.retainAll(kinds);
    if (main.thenKill()) {
      // A cut whose primary is then killed is two faults already. With the master killed or
      // paused too, nobody shrinks the group at the stall, and the region is unavailable for the
      // hold, then the primary's session, then the promotion: a sum of three faults no single
      // bound covers. A master fault during a stall is drawn with the cuts that kill nobody.
      candidates.removeIf(candidate -> candidate.family == Family.MASTER);
    }
    if (overlaps && !candidates.isEmpty()) {
      overlap = fault(candidates.get(random.nextInt(candidates.size())));
      long room = main.holdMillis() > 0 ? Math.min(main.holdMillis(), 3_000) : 1_000;
      delay = random.nextLong(room + 1);
    }
    long gap = quick ? between(1_000, 2_000) : between(3_000, 12_000);
    return new Step(index + 1, main, overlap, delay, gap);
  }

  /**
   * The kinds that may overlap {@code kind}: of another family, and never a second fault that takes
   * a region server away (with replication 3 one may be away at a time, so that no group loses
   * every replica that holds its acknowledged writes).
   */
  static List<FaultKind> overlapping(FaultKind kind) {
    return kind.family == Family.MASTER
        ? List.of(
            FaultKind.SERVER_KILL,
            FaultKind.SERVER_PAUSE,
            FaultKind.ZOOKEEPER_CUT,
            FaultKind.GARBAGE)
        : kind == FaultKind.GARBAGE
            ? List.of(FaultKind.MASTER_KILL, FaultKind.MASTER_PAUSE)
            : List.of(FaultKind.MASTER_KILL, FaultKind.MASTER_PAUSE, FaultKind.GARBAGE);
  }

  private PlannedFault fault(FaultKind kind) {
    long session = layout.sessionTimeoutMillis();
    Target target =
        switch (kind) {
          case SERVER_KILL, SERVER_PAUSE, ZOOKEEPER_CUT, DECOMMISSION -> serverTarget();
          case DISK_FULL -> Target.primaryOf(region());
          case REPLICATION_CUT ->
              Target.replicaPair(region(), random.nextInt(Target.EVERY_BACKUP + 1));
          case MASTER_KILL, MASTER_PAUSE -> masterTarget();
          case MOVE -> Target.moveTo(region(), random.nextInt(2));
          case BALANCE -> Target.cluster();
          case SPLIT, MERGE -> Target.region(region());
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
          case MOVE, BALANCE, SPLIT, MERGE -> 0;
        };
    // A third of the replication cuts (every one in the quick profile) end with the primary
    // killed while cut off: a correct primary acknowledged nothing its backups in the group lack,
    // and one that acknowledges too early loses writes. A primary cut off from every backup is
    // killed before their streams stall (REPLICATION_STALL_MILLIS): after that the master reopens
    // the region with them joining, and the primary may acknowledge writes alone (at the
    // campaign's minimum of one replica, as configured), which its death then loses by design.
    // It is killed after CUT_THEN_KILL_MILLIS at most: the region serves no one from the cut to
    // the promotion, the hold plus the kill's recovery (the session timeout and a pass), and the
    // kill need land only while writes wait for the cut backups (at the load's 600 operations a
    // second, 300 ms is some 180 of them). Cut off from one backup, it may be killed later: the
    // other backup holds every write.
    boolean thenKill = kind == FaultKind.REPLICATION_CUT && (quick || random.nextInt(3) == 0);
    if (thenKill) {
      hold =
          target.index() >= Target.EVERY_BACKUP
              ? between(300, CUT_THEN_KILL_MILLIS)
              : Math.min(hold, 8_000);
    }
    return new PlannedFault(kind, target, hold, random.nextLong(), thenKill);
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
