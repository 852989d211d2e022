package io.kvs.bench.engine;

import io.kvs.core.KeyValue;
import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.engine.Engine;
import io.kvs.engine.EngineOptions;
import io.kvs.engine.Region;
import io.kvs.engine.RegionStats;
import io.kvs.tools.JsonLine;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * The KVS engine (io.kvs.engine): one volume file, one region, writes acknowledged before they are
 * durable (sync off; the engine's flusher makes them durable within its flush interval, the
 * counterpart of RocksDB's WAL without per-write fsync), direct I/O.
 *
 * <p>Memory: the engine takes one budget for its node cache (half) and its in-memory levels (half).
 * The benchmark gives it twice {@link SystemSettings#cacheBytes()}, so that its node cache is
 * exactly the cache every system gets; the L0 half then exceeds what one region's active and
 * immutable L0 of {@link SystemSettings#l0Bytes()} can hold whenever the cache is at least twice
 * the L0 size (the defaults: 128 MiB against 2 x 32 MiB), which leaves the region's L0 size as the
 * binding limit, as RocksDB's write buffers are for it.
 *
 * <p>Size classes: DESIGN.md §8's large pairs are 1023 B, which older engine default thresholds
 * (medium up to 1023 B) would file as medium. The benchmark sets the medium bound one byte lower so
 * each class of the mix lands in the engine category it is named for (small up to 119 B, the
 * default).
 *
 * <p>Write stalls: when compaction falls behind, the engine makes a writer wait for its in-memory
 * level to drain and fails the write with BUSY after its stall timeout (10 s), where RocksDB would
 * keep the writer waiting. The benchmark's client does what a real client does: it retries (the
 * wait is part of the operation's latency) and counts the retries ({@code busy_retries} in the
 * results); it gives up after {@value #BUSY_ATTEMPTS_MAX} attempts.
 */
public final class KvsSystem implements KvSystem {
  /** The engine's share of its memory budget that goes to the node cache. */
  static final int BUDGET_PER_CACHE_BYTE = 2;

  static final int SMALL_KV_BYTES_MAX = 119;
  static final int MEDIUM_KV_BYTES_MAX = KvMix.SizeClass.LARGE.kvBytes() - 1;

  /** Attempts of one write that keeps failing with BUSY before the benchmark gives up. */
  static final int BUSY_ATTEMPTS_MAX = 30;

  private final Path directory;
  private final Engine engine;
  private final Region region;
  private final LongAdder busyRetries = new LongAdder();

  private KvsSystem(Path directory, Engine engine, Region region) {
    this.directory = directory;
    this.engine = engine;
    this.region = region;
  }

  /** Creates a fresh volume under {@code directory}. */
  public static KvsSystem open(Path directory, SystemSettings settings) {
    EngineOptions options =
        EngineOptions.builder()
            .sync(false)
            .directIo(true)
            .l0SizeBytes(settings.l0Bytes())
            .memoryBudgetBytes(BUDGET_PER_CACHE_BYTE * settings.cacheBytes())
            .kvSizeThresholds(SMALL_KV_BYTES_MAX, MEDIUM_KV_BYTES_MAX)
            .build();
    Engine engine = Engine.open(directory.resolve("volume"), options);
    try {
      return new KvsSystem(directory, engine, engine.createRegion("bench"));
    } catch (RuntimeException e) {
      engine.close();
      throw e;
    }
  }

  @Override
  public String name() {
    return "kvs";
  }

  @Override
  public Path directory() {
    return directory;
  }

  @Override
  public void put(ByteBuffer key, ByteBuffer value) {
    for (int attempt = 1; ; attempt++) {
      try {
        region.put(key, value);
        return;
      } catch (KvsException e) {
        if (e.status() != StatusCode.BUSY || attempt >= BUSY_ATTEMPTS_MAX) {
          throw e;
        }
        busyRetries.increment();
      }
    }
  }

  @Override
  public int get(ByteBuffer key, ByteBuffer value) {
    value.clear();
    return region.get(key, value);
  }

  @Override
  public void scan(byte[] start, int count, ScanTotals totals) {
    // One native call: the values behind log pointers are read as one batch.
    for (KeyValue pair : region.scan(start, null, count)) {
      totals.add(pair.key().length, pair.value().length);
    }
  }

  @Override
  public JsonLine stats() {
    RegionStats stats = region.stats();
    return new JsonLine()
        .put("compactions", stats.compactions())
        .put("compaction_bytes_written", stats.compactionBytesWritten())
        .put("device_levels", stats.levelCount())
        .put("level_kv_bytes", stats.levelKvBytes())
        .put("l0_bytes", stats.l0Bytes())
        .put("write_stalls", stats.stalls())
        .put("write_stall_us", stats.stallMicros())
        .put("busy_retries", busyRetries.sum())
        .put("small_log_bytes", stats.smallLogBytes())
        .put("large_log_bytes", stats.largeLogBytes())
        .put("compaction_bytes_read", stats.compactionBytesRead())
        .put("medium_log_bytes", stats.mediumLogBytes())
        .put("value_bytes_read", stats.valueBytesRead())
        .put("gc_bytes_read", stats.gcBytesRead())
        .put("gc_relocated_bytes", stats.gcRelocatedBytes())
        .put("gc_freed_segments", stats.gcFreedSegments())
        .put("level_bytes_read", levels(stats.levelBytesRead()))
        .put("level_bytes_written", levels(stats.levelBytesWritten()))
        .put("large_garbage_bytes", stats.largeGarbageBytes());
  }

  /** Non-zero per-level counters as {@code "L1:123 L2:456"}. */
  private static String levels(List<Long> perLevel) {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < perLevel.size(); i++) {
      if (perLevel.get(i) != 0) {
        text.append(text.isEmpty() ? "" : " ").append('L').append(i + 1).append(':');
        text.append(perLevel.get(i));
      }
    }
    return text.toString();
  }

  @Override
  public void close() {
    engine.close();
  }
}
