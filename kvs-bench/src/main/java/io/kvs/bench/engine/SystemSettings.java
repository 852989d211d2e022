package io.kvs.bench.engine;

/**
 * What every system under test gets alike: memory, background threads, the KV separation threshold
 * of BlobDB.
 *
 * @param cacheBytes block cache: RocksDB's LRU block cache, KVS's node cache (see {@link KvsSystem}
 *     for how its memory budget is derived)
 * @param l0Bytes one in-memory level: KVS's L0 size, RocksDB's write buffer size; both keep at most
 *     two (the active one and one being flushed or compacted)
 * @param backgroundThreads flush and compaction threads (KVS's compaction pool has 2, not
 *     configurable; RocksDB's max_background_jobs is set to this)
 * @param blobMinBytes BlobDB's min_blob_size: values at least this large go to blob files
 */
public record SystemSettings(
    long cacheBytes, long l0Bytes, int backgroundThreads, long blobMinBytes) {
  public SystemSettings {
    if (cacheBytes < (1 << 20) || l0Bytes < (1 << 20)) {
      throw new IllegalArgumentException("cache and L0 need at least 1 MiB each");
    }
    if (backgroundThreads < 1 || blobMinBytes < 0) {
      throw new IllegalArgumentException("bad background threads or blob size");
    }
  }

  /** Cache plus two in-memory levels: the memory budget each system gets. */
  public long memoryBudgetBytes() {
    return cacheBytes + 2 * l0Bytes;
  }
}
