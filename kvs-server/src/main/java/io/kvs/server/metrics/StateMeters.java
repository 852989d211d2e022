package io.kvs.server.metrics;

import io.kvs.core.cluster.RegionRole;
import io.kvs.engine.Engine;
import io.kvs.engine.EngineStats;
import io.kvs.engine.RegionStats;
import io.kvs.server.regions.HostedRegions;
import io.kvs.service.RegionService;
import io.kvs.service.ReplicationStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * A region server's regions, replication and engine meters, read from a snapshot {@link #update}
 * takes (docs/OPERATIONS.md, "Metrics"). Engine meters are summed over the regions held, by role
 * ({@code role} = primary or backup): never a tag per region. Per backup server ({@code backup} =
 * its id, bounded by the cluster's servers: a server once seen keeps its series, at 0) the number
 * of this server's primary regions whose stream to it is in each state, and how far it is behind
 * them: bytes queued and writes not held (summed over the regions), the oldest write waiting for it
 * (the longest over the regions).
 */
final class StateMeters {
  private static final List<RegionRole> ROLES = List.of(RegionRole.PRIMARY, RegionRole.BACKUP);
  private static final List<RegionService.BackupState> STATES =
      List.of(RegionService.BackupState.values());

  /** Sums of the engine counters over the regions of one role. */
  private static final class RoleTotals {
    long regions;
    long l0Bytes;
    long compactions;
    long compactionMicros;
    long compactionBytesRead;
    long compactionBytesWritten;
    long stalls;
    long stallMicros;
    long logBytes;
    long gcRelocatedBytes;
    long gcFreedSegments;
    long largeGarbageBytes;
  }

  private record Snapshot(
      ReplicationStats replication, EngineStats engine, Map<RegionRole, RoleTotals> roles) {}

  private final MeterRegistry registry;
  private final RegionService service;
  private final Engine engine;
  private final HostedRegions regions;
  private volatile Snapshot latest;
  // Per backup server and state: primary regions here whose stream to it is in that state.
  private final Map<String, Map<RegionService.BackupState, Long>> backups =
      new ConcurrentHashMap<>();
  // Per backup server: how far it is behind this server's primaries (summed; oldest wait: max).
  private final Map<String, RegionService.BackupLag> lags = new ConcurrentHashMap<>();

  StateMeters(MeterRegistry registry, RegionService service, Engine engine, HostedRegions regions) {
    this.registry = registry;
    this.service = service;
    this.engine = engine;
    this.regions = regions;
    latest = new Snapshot(emptyReplication(), new EngineStats(0, 0, 0, 0, 0, 0), totals());
    registerReplication();
    registerEngine();
    for (RegionRole role : ROLES) {
      registerRole(role);
    }
  }

  /** Reads the native counters and every region's statistics. */
  void update() {
    Map<RegionRole, RoleTotals> roles = totals();
    Map<String, Map<RegionService.BackupState, Long>> states = new ConcurrentHashMap<>();
    Map<String, RegionService.BackupLag> behind = new ConcurrentHashMap<>();
    for (HostedRegions.Sample sample : regions.samples()) {
      RegionStats stats;
      try {
        stats = sample.region().stats();
      } catch (RuntimeException closedMeanwhile) {
        continue;
      }
      add(roles.get(sample.role()), stats);
      if (sample.role() == RegionRole.PRIMARY && !sample.backups().isEmpty()) {
        List<RegionService.BackupState> streams = service.backupStates(sample.regionId());
        for (int i = 0; i < Math.min(streams.size(), sample.backups().size()); i++) {
          states
              .computeIfAbsent(sample.backups().get(i), b -> new ConcurrentHashMap<>())
              .merge(streams.get(i), 1L, Long::sum);
        }
        List<RegionService.BackupLag> regionLags = service.backupLags(sample.regionId());
        for (int i = 0; i < Math.min(regionLags.size(), sample.backups().size()); i++) {
          behind.merge(sample.backups().get(i), regionLags.get(i), StateMeters::combine);
        }
      }
    }
    latest = new Snapshot(service.replicationStats(), engine.stats(), roles);
    for (String backup : states.keySet()) {
      if (!backups.containsKey(backup)) {
        registerBackup(backup);
      }
    }
    for (String backup : backups.keySet()) {
      backups.put(backup, states.getOrDefault(backup, Map.of()));
      lags.put(backup, behind.getOrDefault(backup, NOT_BEHIND));
    }
  }

  private static Map<RegionRole, RoleTotals> totals() {
    Map<RegionRole, RoleTotals> roles = new ConcurrentHashMap<>();
    for (RegionRole role : ROLES) {
      roles.put(role, new RoleTotals());
    }
    return roles;
  }

  private static void add(RoleTotals totals, RegionStats stats) {
    totals.regions++;
    totals.l0Bytes += stats.l0Bytes();
    totals.compactions += stats.compactions();
    totals.compactionMicros += stats.compactionMicros();
    totals.compactionBytesRead += stats.compactionBytesRead();
    totals.compactionBytesWritten += stats.compactionBytesWritten();
    totals.stalls += stats.stalls();
    totals.stallMicros += stats.stallMicros();
    totals.logBytes += stats.smallLogBytes() + stats.largeLogBytes();
    totals.gcRelocatedBytes += stats.gcRelocatedBytes();
    totals.gcFreedSegments += stats.gcFreedSegments();
    totals.largeGarbageBytes += stats.largeGarbageBytes();
  }

  private void registerReplication() {
    String sent = "bytes a primary wrote one-sidedly into its backups' buffers, all backups";
    counter(
        "kvs.replication.sent.bytes",
        "bytes",
        sent,
        s -> s.replication().logBytes(),
        "kind",
        "log");
    counter(
        "kvs.replication.sent.bytes",
        "bytes",
        sent,
        s -> s.replication().indexBytes(),
        "kind",
        "index");
    counter(
        "kvs.replication.posts",
        null,
        "one-sided writes posted to backups (group commits across regions)",
        s -> s.replication().writes());
    counter(
        "kvs.replication.batches",
        null,
        "batches those posts carried",
        s -> s.replication().batches());
    counter(
        "kvs.replication.flushes",
        null,
        "FLUSH and FLUSH-TAIL messages sent to backups",
        s -> s.replication().flushes());
    counter(
        "kvs.replication.index.shipped",
        null,
        "index segments and levels shipped to backups (send-index)",
        s -> s.replication().indexMessages());
    counter(
        "kvs.replication.backup.log.bytes",
        "bytes",
        "log bytes persisted here as copies of primaries' segments (send-index backup)",
        s -> s.replication().backupTailBytes());
    String installed = "index segments and levels installed here as a backup (send-index)";
    counter(
        "kvs.replication.index.installed",
        null,
        installed,
        s -> s.replication().backupSegments(),
        "kind",
        "segment");
    counter(
        "kvs.replication.index.installed",
        null,
        installed,
        s -> s.replication().backupLevels(),
        "kind",
        "level");
  }

  private void registerEngine() {
    counter(
        "kvs.engine.cache.hits",
        null,
        "node cache lookups answered from memory",
        s -> s.engine().cacheHits());
    counter(
        "kvs.engine.cache.misses",
        null,
        "node cache lookups that read the device",
        s -> s.engine().cacheMisses());
    gauge(
        "kvs.engine.cache.hit.ratio",
        null,
        "node cache hits over lookups since the engine opened",
        s -> hitRatio(s.engine()));
    String used = "memory the node cache and the in-memory levels hold";
    gauge("kvs.engine.memory.used", "bytes", used, s -> s.engine().cacheBytes(), "use", "cache");
    gauge("kvs.engine.memory.used", "bytes", used, s -> s.engine().l0Bytes(), "use", "l0");
    String budget = "the memory budget's share for the node cache and the in-memory levels";
    gauge(
        "kvs.engine.memory.budget",
        "bytes",
        budget,
        s -> s.engine().cacheCapacityBytes(),
        "use",
        "cache");
    gauge(
        "kvs.engine.memory.budget", "bytes", budget, s -> s.engine().l0BudgetBytes(), "use", "l0");
  }

  private void registerRole(RegionRole role) {
    String tag = role.name().toLowerCase(Locale.ROOT);
    gauge(
        "kvs.server.regions",
        null,
        "regions this server holds, by role",
        s -> s.roles().get(role).regions,
        "role",
        tag);
    gauge(
        "kvs.engine.l0.bytes",
        "bytes",
        "memory the regions' in-memory levels hold",
        s -> s.roles().get(role).l0Bytes,
        "role",
        tag);
    FunctionTimer.builder(
            "kvs.engine.compactions",
            this,
            m -> m.latest.roles().get(role).compactions,
            m -> m.latest.roles().get(role).compactionMicros,
            TimeUnit.MICROSECONDS)
        .description("compactions completed and their wall time")
        .tag("role", tag)
        .register(registry);
    String compacted = "device bytes compactions read and wrote";
    counter(
        "kvs.engine.compaction.bytes",
        "bytes",
        compacted,
        s -> s.roles().get(role).compactionBytesRead,
        "role",
        tag,
        "direction",
        "read");
    counter(
        "kvs.engine.compaction.bytes",
        "bytes",
        compacted,
        s -> s.roles().get(role).compactionBytesWritten,
        "role",
        tag,
        "direction",
        "written");
    FunctionTimer.builder(
            "kvs.engine.write.stalls",
            this,
            m -> m.latest.roles().get(role).stalls,
            m -> m.latest.roles().get(role).stallMicros,
            TimeUnit.MICROSECONDS)
        .description("writes that waited for a full in-memory level, and how long")
        .tag("role", tag)
        .register(registry);
    counter(
        "kvs.engine.log.bytes",
        "bytes",
        "bytes appended to the regions' value logs",
        s -> s.roles().get(role).logBytes,
        "role",
        tag);
    counter(
        "kvs.engine.gc.relocated.bytes",
        "bytes",
        "live large-log bytes value-log GC moved out of segments it reclaimed",
        s -> s.roles().get(role).gcRelocatedBytes,
        "role",
        tag);
    counter(
        "kvs.engine.gc.freed.segments",
        null,
        "large-log segments value-log GC gave back to the volume",
        s -> s.roles().get(role).gcFreedSegments,
        "role",
        tag);
    gauge(
        "kvs.engine.gc.garbage.bytes",
        "bytes",
        "large-log bytes no longer referenced (what GC may reclaim)",
        s -> s.roles().get(role).largeGarbageBytes,
        "role",
        tag);
  }

  private static final RegionService.BackupLag NOT_BEHIND = new RegionService.BackupLag(0, 0, 0);

  private static RegionService.BackupLag combine(
      RegionService.BackupLag a, RegionService.BackupLag b) {
    return new RegionService.BackupLag(
        a.queuedBytes() + b.queuedBytes(),
        a.writes() + b.writes(),
        Math.max(a.oldestWaitNanos(), b.oldestWaitNanos()));
  }

  private void registerBackup(String backup) {
    backups.put(backup, Map.of());
    lags.put(backup, NOT_BEHIND);
    Gauge.builder(
            "kvs.replication.lag.bytes",
            this,
            m -> m.lags.getOrDefault(backup, NOT_BEHIND).queuedBytes())
        .description("bytes this server's primaries queued for a backup server and not yet sent")
        .baseUnit("bytes")
        .tag("backup", backup)
        .register(registry);
    Gauge.builder(
            "kvs.replication.lag.writes",
            this,
            m -> m.lags.getOrDefault(backup, NOT_BEHIND).writes())
        .description("writes this server's primaries applied that a backup server does not hold")
        .tag("backup", backup)
        .register(registry);
    Gauge.builder(
            "kvs.replication.lag",
            this,
            m -> m.lags.getOrDefault(backup, NOT_BEHIND).oldestWaitNanos() / 1e9)
        .description("how long the oldest write waiting for a backup server has waited")
        .baseUnit("seconds")
        .tag("backup", backup)
        .register(registry);
    for (RegionService.BackupState state : STATES) {
      Gauge.builder(
              "kvs.replication.backup.regions",
              this,
              m -> m.backups.getOrDefault(backup, Map.of()).getOrDefault(state, 0L))
          .description("primary regions here whose stream to a backup server is in a state")
          .tag("backup", backup)
          .tag("state", state.name().toLowerCase(Locale.ROOT))
          .register(registry);
    }
  }

  private static double hitRatio(EngineStats stats) {
    long lookups = stats.cacheHits() + stats.cacheMisses();
    return lookups == 0 ? Double.NaN : (double) stats.cacheHits() / lookups;
  }

  private void counter(
      String name,
      String unit,
      String description,
      ToDoubleFunction<Snapshot> value,
      String... tags) {
    FunctionCounter.builder(name, this, m -> value.applyAsDouble(m.latest))
        .description(description)
        .baseUnit(unit)
        .tags(tags)
        .register(registry);
  }

  private void gauge(
      String name,
      String unit,
      String description,
      ToDoubleFunction<Snapshot> value,
      String... tags) {
    Gauge.builder(name, this, m -> value.applyAsDouble(m.latest))
        .description(description)
        .baseUnit(unit)
        .tags(tags)
        .register(registry);
  }

  private static ReplicationStats emptyReplication() {
    return new ReplicationStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  }
}
