package io.kvs.bench.engine;

import java.util.Locale;

/**
 * The YCSB core workloads (DESIGN.md §8): Load A inserts every record; runs A to E then operate on
 * the loaded records with YCSB's proportions and request distributions. Phases of our own follow:
 * the sustained put rate (the peak), then open-loop overwrites at fixed shares of it, for put
 * latency while compactions run.
 */
public enum Workload {
  LOAD_A("loadA", 0, 0, 1, 0, Distribution.INSERT_ORDER),
  RUN_A("runA", 0.5, 0.5, 0, 0, Distribution.ZIPFIAN),
  RUN_B("runB", 0.95, 0.05, 0, 0, Distribution.ZIPFIAN),
  RUN_C("runC", 1, 0, 0, 0, Distribution.ZIPFIAN),
  RUN_D("runD", 0.95, 0, 0.05, 0, Distribution.LATEST),
  RUN_E("runE", 0, 0, 0.05, 0.95, Distribution.ZIPFIAN),
  /**
   * Not YCSB: three full overwrites, every record updated once per pass in record order, which is
   * what the engine targets' space-amplification check (three overwrites of L) needs.
   */
  OVERWRITE_3("overwrite3", 0, 1, 0, 0, Distribution.PASSES),
  /**
   * Not YCSB: the peak the open-loop phases offer shares of, the put rate the system sustains:
   * closed-loop overwrites of uniformly chosen records for as long as an open-loop phase lasts
   * ({@link #timed()}). Load A alone is no peak: on a dataset a few L0s large it measures inserts
   * into memory, which no system sustains.
   */
  PUTS_PEAK("putsPeak", 0, 1, 0, 0, Distribution.UNIFORM),
  /**
   * Not YCSB: open loop, overwrites of uniformly chosen records at half of the peak (the system's
   * {@link #PUTS_PEAK} ops/s in the same run), each put's latency counted from its intended start,
   * so that a put waiting behind a compaction shows with everything queued behind it.
   */
  PUTS_50("puts50", 0, 1, 0, 0, Distribution.UNIFORM),
  /** As {@link #PUTS_50}, at 90 % of the peak. */
  PUTS_90("puts90", 0, 1, 0, 0, Distribution.UNIFORM);

  /** Full passes over the records that {@link #OVERWRITE_3} makes. */
  public static final int OVERWRITE_PASSES = 3;

  /** The longest scan, in records; lengths are uniform in {@code [1, SCAN_LENGTH_MAX]}. */
  public static final int SCAN_LENGTH_MAX = 100;

  private static final Operation[] CHOICE_ORDER = {
    Operation.READ, Operation.UPDATE, Operation.INSERT, Operation.SCAN
  };

  /** How the records that existing-key operations touch are chosen. */
  public enum Distribution {
    /** Load: records are inserted in number order (their keys are hashed, so not key order). */
    INSERT_ORDER,
    /** YCSB's scrambled zipfian, theta 0.99. */
    ZIPFIAN,
    /** YCSB's latest: recently inserted records are the most popular. */
    LATEST,
    /** Every record once per pass, in number order, passes one after another. */
    PASSES,
    /** Every existing record equally likely. */
    UNIFORM
  }

  private final String id;
  private final double read;
  private final double update;
  private final double insert;
  private final double scan;
  private final Distribution distribution;

  Workload(String id, double read, double update, double insert, double scan, Distribution dist) {
    this.id = id;
    this.read = read;
    this.update = update;
    this.insert = insert;
    this.scan = scan;
    this.distribution = dist;
  }

  /** The name used in results and on the command line: loadA, runA ... runE, overwrite3. */
  public String id() {
    return id;
  }

  public Distribution distribution() {
    return distribution;
  }

  public boolean isLoad() {
    return this == LOAD_A;
  }

  /** Whether the phase runs for a set time rather than a number of operations. */
  public boolean timed() {
    return this == PUTS_PEAK;
  }

  /**
   * The share of the peak (the same system's {@link #PUTS_PEAK} ops/s) an open-loop phase offers; 0
   * for the closed-loop phases.
   */
  public double openLoopFraction() {
    return switch (this) {
      case PUTS_50 -> 0.5;
      case PUTS_90 -> 0.9;
      default -> 0;
    };
  }

  /** The fraction of operations of {@code type}. */
  public double proportion(Operation type) {
    return switch (type) {
      case READ -> read;
      case UPDATE -> update;
      case INSERT -> insert;
      case SCAN -> scan;
    };
  }

  /** The operation for a uniform draw {@code u} in {@code [0, 1)}. */
  public Operation choose(double u) {
    double cumulative = 0;
    Operation last = null;
    for (Operation type : CHOICE_ORDER) {
      double share = proportion(type);
      if (share <= 0) {
        continue;
      }
      cumulative += share;
      last = type;
      if (u < cumulative) {
        return type;
      }
    }
    // Only reachable through rounding of the cumulative sum just below 1.
    return last;
  }

  /**
   * Parses {@code loadA}, {@code runA} ... {@code runE}, {@code overwrite3}, {@code puts50}, {@code
   * puts90}, ignoring case.
   */
  public static Workload parse(String name) {
    String wanted = name.trim().toLowerCase(Locale.ROOT);
    for (Workload workload : values()) {
      if (workload.id.toLowerCase(Locale.ROOT).equals(wanted)) {
        return workload;
      }
    }
    throw new IllegalArgumentException(
        "unknown workload '"
            + name
            + "'; known: loadA, runA, runB, runC, runD, runE, overwrite3, puts50, puts90");
  }
}
