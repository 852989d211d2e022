package io.kvs.master;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Collection;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A master's meters (docs/OPERATIONS.md, "Metrics"): whether it is active; the cluster as its last
 * pass saw it (live servers, regions by state, regions under-replicated); its passes and how long
 * they took; recoveries (a region's group losing a member until it is whole again) and their
 * durations. A standby master reports no cluster view (its gauges read 0). Thread-safe: the pass
 * thread writes, readers (scrapes, JMX) read a snapshot.
 */
final class MasterMetrics {
  private record View(int servers, Map<RegionState, Integer> regions, int underReplicated) {}

  private static final View EMPTY = new View(0, new EnumMap<>(RegionState.class), 0);

  private volatile View view = EMPTY;
  // Held here: a gauge keeps only a weak reference to what it reads.
  private final BooleanSupplier active;
  private final Timer recoveries;
  private final Timer passes;
  private final Counter passesConverged;
  private final Counter passesConverging;
  private final Counter passesFailed;
  private final MeterRegistry registry;

  MasterMetrics(MeterRegistry registry, BooleanSupplier active) {
    this.active = active;
    this.registry = registry;
    Gauge.builder("kvs.master.active", this, m -> m.active.getAsBoolean() ? 1 : 0)
        .description("1 while this master is the active one, else 0")
        .register(registry);
    Gauge.builder("kvs.master.servers.live", this, m -> m.view.servers())
        .description("region servers registered in ZooKeeper, as the last pass saw them")
        .register(registry);
    for (RegionState state : RegionState.values()) {
      Gauge.builder("kvs.master.regions", this, m -> m.view.regions().getOrDefault(state, 0))
          .description("regions by state, as the last pass saw them")
          .tag("state", state.name().toLowerCase(Locale.ROOT))
          .register(registry);
    }
    Gauge.builder("kvs.master.regions.under.replicated", this, m -> m.view.underReplicated())
        .description("regions with fewer replicas in sync than the replication factor")
        .register(registry);
    recoveries =
        Timer.builder("kvs.master.recoveries")
            .description("recoveries of a region's group, from the pass that saw a member gone")
            .register(registry);
    passes =
        Timer.builder("kvs.master.passes")
            .description("reconciliation passes of the active master and how long they took")
            .register(registry);
    passesConverged =
        Counter.builder("kvs.master.passes.outcome")
            .description("passes by outcome: every region open and whole, or not")
            .tag("outcome", "converged")
            .register(registry);
    passesConverging =
        Counter.builder("kvs.master.passes.outcome")
            .tag("outcome", "converging")
            .register(registry);
    passesFailed =
        Counter.builder("kvs.master.passes.outcome").tag("outcome", "failed").register(registry);
  }

  /** The cluster as a pass saw it. */
  void observed(int servers, Collection<RegionDescriptor> regions, int replicationFactor) {
    Map<RegionState, Integer> byState = new EnumMap<>(RegionState.class);
    int under = 0;
    for (RegionDescriptor region : regions) {
      byState.merge(region.state(), 1, Integer::sum);
      int inSync = region.members().size() - region.joining().size();
      if (inSync < replicationFactor) {
        under++;
      }
    }
    view = new View(servers, byState, under);
  }

  /** This master stands by: it has no view of the cluster. */
  void standingBy() {
    view = EMPTY;
  }

  /** A region's recovery took {@code nanos}. */
  void recovered(long nanos) {
    recoveries.record(nanos, TimeUnit.NANOSECONDS);
  }

  /** The balancer changed a region's group: {@code kind} is replica, surplus or leader. */
  void balanced(String kind) {
    Counter.builder("kvs.master.balancer.moves")
        .description("changes the master's balancer made to groups, by kind")
        .tag("kind", kind)
        .register(registry)
        .increment();
  }

  /** A region split (its commit in ZooKeeper). */
  void merge() {
    Counter.builder("kvs.master.merges")
        .description("pairs of regions the master merged")
        .register(registry)
        .increment();
  }

  void split() {
    Counter.builder("kvs.master.splits")
        .description("regions the master split")
        .register(registry)
        .increment();
  }

  /** A pass took {@code nanos}: converged, still converging, or failed with an exception. */
  void passed(long nanos, boolean converged, boolean failed) {
    passes.record(nanos, TimeUnit.NANOSECONDS);
    if (failed) {
      passesFailed.increment();
    } else if (converged) {
      passesConverged.increment();
    } else {
      passesConverging.increment();
    }
  }
}
