package io.kvs.bench.engine;

import java.nio.file.Path;
import org.rocksdb.CompressionType;
import org.rocksdb.Options;

/**
 * RocksDB with its integrated BlobDB (KV separation): {@link RocksDbSystem}'s configuration plus
 * {@code enable_blob_files}, with blob garbage collection on.
 *
 * <p>{@code min_blob_size} is {@link SystemSettings#blobMinBytes()}, 64 B by default: the values of
 * the mixes' medium (99 B) and large (999 B) pairs go to blob files, the small ones (9 B) stay in
 * the LSM tree. A blob reference (file number, offset and size as varints, plus a type byte) takes
 * about as many bytes as a 9 B value, so separating small values can only add a second read and GC
 * work; from medium values on, separation shrinks what compactions rewrite by 5 to 50 times. This
 * is the closest BlobDB gets to the seed's "always separate" baseline without making it pointlessly
 * weak, and it separates the same classes KVS keeps out of its levels (medium until the last
 * levels, large always).
 *
 * <p>GC: {@code blob_garbage_collection_age_cutoff} 0.3 (the live blobs of the oldest 30% of blob
 * files are relocated when compactions meet them, as the seed configured BlobDB's GC to scan 30% of
 * the log). Blob files are cut at the write buffer size, so GC has files of a useful granularity at
 * the benchmark's dataset sizes. Blobs are read with direct I/O and, as RocksJava offers no blob
 * cache option, are not cached (KVS does not cache values in its logs either).
 */
public final class BlobDbSystem {
  static final double GC_AGE_CUTOFF = 0.3;

  private BlobDbSystem() {}

  /** Opens RocksDB with integrated BlobDB on a fresh {@code directory}. */
  public static RocksDbSystem open(Path directory, SystemSettings settings) {
    return RocksDbSystem.open("blobdb", directory, settings, BlobDbSystem::configure);
  }

  static void configure(Options options, SystemSettings settings) {
    options
        .setEnableBlobFiles(true)
        .setMinBlobSize(settings.blobMinBytes())
        .setBlobFileSize(settings.l0Bytes())
        .setBlobCompressionType(CompressionType.NO_COMPRESSION)
        .setEnableBlobGarbageCollection(true)
        .setBlobGarbageCollectionAgeCutoff(GC_AGE_CUTOFF);
  }
}
