package io.kvs.bench.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * Runs the schedule's steps: injects the fault (and the overlapping one), holds each for its
 * planned length, heals each when its hold ends (the one ending first first), restarts any process
 * that died on its own meanwhile, and waits until the cluster is back at full strength before the
 * pause that ends the step. A cluster that does not come back is a failed check; the campaign then
 * restarts the primaries of regions that take no write (an operator's remedy) and goes on if that
 * brings it back. Prints each fault as it goes and keeps its {@link FaultRecord}.
 */
final class StepRunner {
  /** How long the cluster may take to come back; past it the campaign stops injecting. */
  static final Duration FULL_STRENGTH_TIMEOUT = Duration.ofSeconds(240);

  private final ChaosCluster cluster;
  private final Faults faults;
  private final FullStrength strength;
  private final long originNanos;
  private final List<FaultRecord> records = new ArrayList<>();

  StepRunner(ChaosCluster cluster, Faults faults, FullStrength strength, long originNanos) {
    this.cluster = cluster;
    this.faults = faults;
    this.strength = strength;
    this.originNanos = originNanos;
  }

  /** Every fault so far, in injection order. */
  List<FaultRecord> records() {
    return List.copyOf(records);
  }

  /**
   * Runs {@code step}; returns false if the cluster did not come back to full strength (recorded as
   * an error of the step's fault), after which no more faults should be injected.
   */
  boolean run(Step step) throws Exception {
    FaultRecord main = new FaultRecord(records.size() + 1, step.number(), step.main(), false);
    records.add(main);
    Faults.Active mainActive = inject(main);
    FaultRecord overlap = null;
    Faults.Active overlapActive = null;
    if (step.overlap() != null && mainActive != null) {
      Thread.sleep(step.overlapDelayMillis()); // the schedule's offset between the two faults
      overlap = new FaultRecord(records.size() + 1, step.number(), step.overlap(), true);
      records.add(overlap);
      overlapActive = inject(overlap);
    }
    // Each is healed when its own hold ends, the one ending first first: healing one (a restart
    // takes seconds) never stretches the other's hold past what the schedule drew, beyond the
    // time that heal itself takes.
    if (overlapActive != null && mainActive != null && plannedEnd(main) < plannedEnd(overlap)) {
      holdAndHeal(main, mainActive);
      holdAndHeal(overlap, overlapActive);
    } else {
      if (overlapActive != null) {
        holdAndHeal(overlap, overlapActive);
      }
      if (mainActive != null) {
        holdAndHeal(main, mainActive);
      }
    }
    restartCrashed(main);
    Optional<String> missing = strength.await(FULL_STRENGTH_TIMEOUT);
    if (missing.isPresent()) {
      main.error(missing.get());
      print(main, "NOT back at full strength: " + missing.get());
      if (!repair(main)) {
        return false;
      }
    }
    long whole = System.nanoTime();
    for (FaultRecord record : overlap == null ? List.of(main) : List.of(main, overlap)) {
      if (record.ran()) {
        record.fullStrength(whole);
      }
    }
    print(main, "full strength again" + (overlap == null ? "" : " (with #" + overlap.number + ")"));
    Thread.sleep(step.gapMillis()); // the schedule's pause between steps: load without faults
    return true;
  }

  /**
   * After a step the cluster did not recover from (already a failed check): restarts the primaries
   * of the regions that take no write, as an operator would, so that the campaign may go on finding
   * more; whether the cluster is back at full strength then.
   */
  private boolean repair(FaultRecord record) throws Exception {
    Set<String> stuck = strength.primariesTakingNoWrite();
    if (stuck.isEmpty()) {
      return false;
    }
    for (String server : stuck) {
      print(
          record, "repair: restarting server-" + server + ", which leads a region taking no write");
      cluster.kill("server-" + server);
      cluster.restart("server-" + server);
      record.note("repair: restarted server-" + server + " (it led a region that took no write)");
    }
    Optional<String> again = strength.await(FULL_STRENGTH_TIMEOUT);
    if (again.isPresent()) {
      record.error("still " + again.get() + " after restarting " + stuck);
      print(record, "still NOT at full strength: " + again.get());
      return false;
    }
    return true;
  }

  private Faults.Active inject(FaultRecord record) {
    try {
      Faults.Active active = faults.inject(record.planned, record);
      print(record, "injected: " + record.planned.target() + " -> " + record.victim());
      return active;
    } catch (Exception e) {
      record.error("could not inject: " + e);
      print(record, "could NOT inject: " + e);
      return null;
    }
  }

  /** When {@code record}'s planned hold ends (System.nanoTime). */
  private static long plannedEnd(FaultRecord record) {
    return record.injectedNanos() + record.planned.holdMillis() * 1_000_000;
  }

  private void holdAndHeal(FaultRecord record, Faults.Active active) throws InterruptedException {
    long until = plannedEnd(record);
    long wait = until - System.nanoTime();
    if (record.ran() && wait > 0) {
      Thread.sleep(wait / 1_000_000); // the fault's planned length, from the schedule
    }
    try {
      active.heal();
      record.healed(System.nanoTime());
      print(
          record, "healed" + (record.errors().isEmpty() ? "" : " with errors: " + record.errors()));
    } catch (Exception e) {
      record.healed(System.nanoTime());
      record.error("could not heal: " + e);
      print(record, "could NOT heal: " + e);
    }
  }

  /**
   * Starts again every process that is down though no fault holds it down: one that died on its own
   * (the crash watch counted it) or whose restart failed.
   */
  private void restartCrashed(FaultRecord record) throws Exception {
    cluster.watch().check();
    for (String name : cluster.processNames()) {
      if (!cluster.watch().expected().containsKey(name) && !cluster.running(name)) {
        record.note("restarted " + name + ", found down");
        print(record, name + " is down: restarting it");
        cluster.restart(name);
      }
    }
  }

  private void print(FaultRecord record, String what) {
    System.out.printf(
        Locale.ROOT,
        "%7.1f s  #%-3d %-15s %s%n",
        (System.nanoTime() - originNanos) / 1e9,
        record.number,
        record.kind().label,
        what);
  }
}
