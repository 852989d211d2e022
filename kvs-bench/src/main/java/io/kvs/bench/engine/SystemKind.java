package io.kvs.bench.engine;

import java.nio.file.Path;
import java.util.Locale;

/** The systems the engine benchmark compares, in the order it runs them. */
public enum SystemKind {
  KVS("kvs"),
  ROCKSDB("rocksdb"),
  /** RocksDB with its WAL buffered in user space and flushed every 50 ms, as KVS's log is. */
  ROCKSDB_WAL50("rocksdb-wal50"),
  BLOBDB("blobdb");

  private final String id;

  SystemKind(String id) {
    this.id = id;
  }

  /** The name used in results and on the command line. */
  public String id() {
    return id;
  }

  /** Opens a fresh instance on {@code directory} (which must exist and be empty). */
  public KvSystem open(Path directory, SystemSettings settings) {
    return switch (this) {
      case KVS -> KvsSystem.open(directory, settings);
      case ROCKSDB -> RocksDbSystem.open(directory, settings);
      case ROCKSDB_WAL50 -> RocksDbSystem.openWalBuffered(directory, settings);
      case BLOBDB -> BlobDbSystem.open(directory, settings);
    };
  }

  /**
   * Parses {@code kvs}, {@code rocksdb}, {@code rocksdb-wal50} or {@code blobdb}, ignoring case.
   */
  public static SystemKind parse(String name) {
    String wanted = name.trim().toLowerCase(Locale.ROOT);
    for (SystemKind kind : values()) {
      if (kind.id.equals(wanted)) {
        return kind;
      }
    }
    throw new IllegalArgumentException(
        "unknown system '" + name + "'; known: kvs, rocksdb, rocksdb-wal50, blobdb");
  }
}
