package io.kvs.engine;

/**
 * A snapshot of an engine's own counters (its regions have {@link RegionStats}).
 *
 * @param cacheHits node cache lookups answered from memory, since the engine opened
 * @param cacheMisses node cache lookups that read the device, since the engine opened
 * @param cacheBytes nodes cached now
 * @param cacheCapacityBytes the cache's share of the memory budget
 * @param l0Bytes memory every region's in-memory levels hold now
 * @param l0BudgetBytes the in-memory levels' share of the memory budget (beyond it writers switch
 *     their L0 early or stall)
 */
public record EngineStats(
    long cacheHits,
    long cacheMisses,
    long cacheBytes,
    long cacheCapacityBytes,
    long l0Bytes,
    long l0BudgetBytes) {

  static EngineStats of(long[] v) {
    return new EngineStats(v[0], v[1], v[2], v[3], v[4], v[5]);
  }
}
