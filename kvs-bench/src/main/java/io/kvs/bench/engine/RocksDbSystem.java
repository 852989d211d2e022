package io.kvs.bench.engine;

import io.kvs.tools.JsonLine;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompactionStyle;
import org.rocksdb.CompressionType;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteOptions;

/**
 * RocksDB through its JNI binding, configured as the engine comparison requires: leveled
 * compaction, values in place, no compression, Bloom filters (10 bits per key), an LRU block cache
 * of {@link SystemSettings#cacheBytes()} for data blocks, write buffers of {@link
 * SystemSettings#l0Bytes()} (at most two, like KVS's active and immutable L0), the WAL on without
 * per-write sync, and direct I/O for reads, flushes and compactions so that, like KVS, it gets no
 * help from the page cache. Everything else is RocksDB's default (level size multiplier 10, 64 MiB
 * target files, 4 KiB blocks, index and filter blocks held outside the block cache: about 1.25 B of
 * filter per key plus ~1% of the SST bytes of index, a few MiB at the benchmark's sizes, the
 * counterpart of KVS's in-memory Bloom filters).
 *
 * <p>{@link BlobDbSystem} opens the same configuration with integrated BlobDB on top; {@link
 * #openWalBuffered} the same with the WAL kept in user space and flushed every {@value
 * #WAL_FLUSH_MILLIS} ms, KVS's own loss window.
 */
public final class RocksDbSystem implements KvSystem {
  /** Bloom filter bits per key; the usual choice, about 1% false positives. */
  static final double BLOOM_BITS_PER_KEY = 10;

  /**
   * How often {@link #openWalBuffered} writes the WAL buffer out: KVS without {@code sync} keeps at
   * most this much of its log in user space (its log flush interval).
   */
  static final long WAL_FLUSH_MILLIS = 50;

  /** Options a variant adds on top of the common configuration. */
  @FunctionalInterface
  interface Variant {
    void configure(Options options, SystemSettings settings);
  }

  private final String name;
  private final Path directory;
  private final boolean blobFiles;
  private final List<AutoCloseable> resources;
  private final RocksDB db;
  private final WriteOptions writeOptions;
  private final ReadOptions readOptions;

  /** The WAL flusher of {@link #openWalBuffered}; null otherwise. */
  private ScheduledExecutorService walFlusher;

  private RocksDbSystem(
      String name,
      Path directory,
      boolean blobFiles,
      List<AutoCloseable> resources,
      RocksDB db,
      WriteOptions writeOptions,
      ReadOptions readOptions) {
    this.name = name;
    this.directory = directory;
    this.blobFiles = blobFiles;
    this.resources = resources;
    this.db = db;
    this.writeOptions = writeOptions;
    this.readOptions = readOptions;
  }

  /** Opens plain RocksDB (values in place) on a fresh {@code directory}. */
  public static RocksDbSystem open(Path directory, SystemSettings settings) {
    return open("rocksdb", directory, settings, (options, unused) -> {});
  }

  /**
   * Opens plain RocksDB with the durability KVS has without {@code sync}: {@code manual_wal_flush},
   * so a put appends to a user-space WAL buffer (RocksDB's default {@code write()}s every put into
   * the page cache, which survives a process crash, where KVS's buffer does not), and a {@code
   * FlushWAL} every {@value #WAL_FLUSH_MILLIS} ms.
   */
  public static RocksDbSystem openWalBuffered(Path directory, SystemSettings settings) {
    RocksDbSystem system =
        open(
            "rocksdb-wal50",
            directory,
            settings,
            (options, unused) -> options.setManualWalFlush(true));
    ScheduledExecutorService flusher =
        Executors.newSingleThreadScheduledExecutor(
            task -> {
              Thread thread = new Thread(task, "rocksdb-wal-flush");
              thread.setDaemon(true);
              return thread;
            });
    flusher.scheduleAtFixedRate(
        system::flushWal, WAL_FLUSH_MILLIS, WAL_FLUSH_MILLIS, TimeUnit.MILLISECONDS);
    system.walFlusher = flusher;
    return system;
  }

  private void flushWal() {
    try {
      db.flushWal(false);
    } catch (RocksDBException e) {
      // The next round tries again; a put would fail on the same error and report it.
    }
  }

  static RocksDbSystem open(String name, Path directory, SystemSettings settings, Variant variant) {
    RocksDB.loadLibrary();
    List<AutoCloseable> resources = new ArrayList<>();
    try {
      LRUCache cache = add(resources, new LRUCache(settings.cacheBytes()));
      BloomFilter filter = add(resources, new BloomFilter(BLOOM_BITS_PER_KEY));
      // Index and filter blocks stay with the open table readers, outside the block cache
      // (RocksDB's default), as KVS keeps its Bloom filters in memory outside its node cache.
      // Putting them in the sharded cache instead made BlobDB re-read megabyte-sized filter
      // blocks on almost every get once its few large SSTs had been compacted into the last
      // level.
      BlockBasedTableConfig table =
          new BlockBasedTableConfig()
              .setBlockCache(cache)
              .setFilterPolicy(filter)
              .setCacheIndexAndFilterBlocks(false);
      Options options =
          add(resources, new Options())
              .setCreateIfMissing(true)
              .setCompactionStyle(CompactionStyle.LEVEL)
              .setCompressionType(CompressionType.NO_COMPRESSION)
              .setBottommostCompressionType(CompressionType.NO_COMPRESSION)
              .setWriteBufferSize(settings.l0Bytes())
              .setMaxWriteBufferNumber(2)
              .setMaxBackgroundJobs(settings.backgroundThreads())
              .setUseDirectReads(true)
              .setUseDirectIoForFlushAndCompaction(true)
              .setTableFormatConfig(table)
              .setInfoLogLevel(InfoLogLevel.WARN_LEVEL)
              .setKeepLogFileNum(2);
      variant.configure(options, settings);
      boolean blobFiles = options.enableBlobFiles();
      WriteOptions writeOptions = add(resources, new WriteOptions().setSync(false));
      ReadOptions readOptions = add(resources, new ReadOptions());
      RocksDB db = RocksDB.open(options, directory.toAbsolutePath().toString());
      return new RocksDbSystem(
          name, directory, blobFiles, resources, db, writeOptions, readOptions);
    } catch (RocksDBException | RuntimeException e) {
      closeAll(resources);
      throw new IllegalStateException("cannot open " + name + " in " + directory, e);
    }
  }

  private static <T extends AutoCloseable> T add(List<AutoCloseable> resources, T resource) {
    resources.add(resource);
    return resource;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public Path directory() {
    return directory;
  }

  @Override
  public void put(ByteBuffer key, ByteBuffer value) {
    try {
      // RocksJava consumes the buffers' remaining bytes; the contract keeps positions unchanged.
      db.put(writeOptions, key.duplicate(), value.duplicate());
    } catch (RocksDBException e) {
      throw new IllegalStateException(name + " put failed", e);
    }
  }

  @Override
  public int get(ByteBuffer key, ByteBuffer value) {
    value.clear();
    try {
      int size = db.get(readOptions, key.duplicate(), value);
      return size == RocksDB.NOT_FOUND ? -1 : size;
    } catch (RocksDBException e) {
      throw new IllegalStateException(name + " get failed", e);
    }
  }

  @Override
  public void scan(byte[] start, int count, ScanTotals totals) {
    try (RocksIterator iterator = db.newIterator(readOptions)) {
      iterator.seek(start);
      for (int read = 0; read < count && iterator.isValid(); ) {
        totals.add(iterator.key().length, iterator.value().length);
        if (++read < count) {
          iterator.next();
        }
      }
    }
  }

  @Override
  public JsonLine stats() {
    JsonLine stats = new JsonLine();
    try {
      StringBuilder files = new StringBuilder();
      for (int level = 0; level < 7; level++) {
        String count = db.getProperty("rocksdb.num-files-at-level" + level);
        if (!"0".equals(count)) {
          files.append(files.length() == 0 ? "" : " ").append('L').append(level).append(':');
          files.append(count);
        }
      }
      stats.put("files_per_level", files.toString());
      stats.put("sst_bytes", db.getLongProperty("rocksdb.total-sst-files-size"));
      if (blobFiles) {
        stats.put("blob_bytes", db.getLongProperty("rocksdb.total-blob-file-size"));
        stats.put("blob_garbage_bytes", db.getLongProperty("rocksdb.live-blob-file-garbage-size"));
      }
      Map<String, String> cf = db.getMapProperty("rocksdb.cfstats");
      copyNumber(cf, "compaction.Sum.CompCount", stats, "compactions");
      copyNumber(cf, "compaction.Sum.WriteGB", stats, "compaction_write_gb");
      copyNumber(cf, "io_stalls.total_slowdown", stats, "write_slowdowns");
      copyNumber(cf, "io_stalls.total_stop", stats, "write_stops");
    } catch (RocksDBException e) {
      stats.put("error", e.getMessage());
    }
    return stats;
  }

  private static void copyNumber(Map<String, String> from, String key, JsonLine to, String name) {
    String value = from.get(key);
    if (value != null) {
      try {
        to.put(name, Double.parseDouble(value));
      } catch (NumberFormatException e) {
        to.put(name, value);
      }
    }
  }

  @Override
  public void close() {
    if (walFlusher != null) {
      walFlusher.shutdown();
      try {
        walFlusher.awaitTermination(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      flushWal();
    }
    try {
      db.closeE();
    } catch (RocksDBException e) {
      throw new IllegalStateException(name + " close failed", e);
    } finally {
      closeAll(resources);
    }
  }

  private static void closeAll(List<AutoCloseable> resources) {
    for (int i = resources.size() - 1; i >= 0; i--) {
      try {
        resources.get(i).close();
      } catch (Exception e) {
        // Native handles of options and caches: nothing left to do if freeing one fails.
      }
    }
    resources.clear();
  }
}
