package io.kvs.bench.engine;

import java.nio.file.Path;
import java.util.Locale;

/** The systems the engine benchmark compares, in the order it runs them. */
public enum SystemKind {
  KVS("kvs"),
  ROCKSDB("rocksdb"),
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
      case BLOBDB -> BlobDbSystem.open(directory, settings);
    };
  }

  /** Parses {@code kvs}, {@code rocksdb} or {@code blobdb}, ignoring case. */
  public static SystemKind parse(String name) {
    String wanted = name.trim().toLowerCase(Locale.ROOT);
    for (SystemKind kind : values()) {
      if (kind.id.equals(wanted)) {
        return kind;
      }
    }
    throw new IllegalArgumentException(
        "unknown system '" + name + "'; known: kvs, rocksdb, blobdb");
  }
}
