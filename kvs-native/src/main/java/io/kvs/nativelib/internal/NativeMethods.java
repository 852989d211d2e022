package io.kvs.nativelib.internal;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import java.nio.ByteBuffer;

/**
 * Every native method of libkvs, registered by {@code JNI_OnLoad} in {@code jni/}. Callers must
 * have loaded the library ({@link io.kvs.nativelib.NativeLibrary#load()}) first and must validate
 * arguments themselves; the native side re-checks ranges and raises {@link
 * StatusCode#INVALID_ARGUMENT} rather than touching memory out of bounds.
 */
public final class NativeMethods {
  private NativeMethods() {}

  /** The library's version string. */
  public static native String version();

  /** The C ABI version ({@code KVS_ABI_VERSION}) the library was built with. */
  public static native int abiVersion();

  /** One line describing the native build (compiler, build type, sanitizers, CPU features). */
  public static native String buildInfo();

  /** The C ABI's name for a status code ({@code kvs_status_name}). */
  public static native String statusName(int code);

  /** Extends {@code crc} with {@code array[offset, offset + length)}. */
  public static native int crc32cExtendArray(int crc, byte[] array, int offset, int length);

  /** Extends {@code crc} with bytes {@code [offset, offset + length)} of a direct buffer. */
  public static native int crc32cExtendDirect(int crc, ByteBuffer buffer, int offset, int length);

  /** Whether CRC32C runs on the CPU's instruction. */
  public static native boolean crc32cIsHardwareAccelerated();

  // --- Engine (io.kvs.engine). Handles are native pointers; 0 is never valid.

  /** Opens (and with {@code createIfMissing} formats) a volume; returns the engine handle. */
  public static native long engineOpen(
      String path,
      boolean sync,
      int flushIntervalMillis,
      boolean directIo,
      long l0SizeBytes,
      int growthFactor,
      int smallKvBytesMax,
      int mediumKvBytesMax,
      long memoryBudgetBytes,
      boolean createIfMissing);

  /** Syncs and closes every region, then the volume. */
  public static native void engineClose(long engine);

  /** The engine's counters, in {@code kvs_engine_stats} order. */
  public static native long[] engineStats(long engine);

  /** Creates a region; returns its handle. */
  public static native long regionCreate(long engine, byte[] nameUtf8);

  /** Opens a region; returns its handle. */
  public static native long regionOpen(long engine, byte[] nameUtf8);

  /** Drops a region and frees its space. */
  public static native void regionDrop(long engine, byte[] nameUtf8);

  /** Splits a region into two that share its segments. */
  public static native void regionSplit(
      long engine, byte[] nameUtf8, byte[] splitKey, byte[] lowerUtf8, byte[] upperUtf8);

  /** Writes a key's value. */
  public static native void put(
      long region,
      byte[] key,
      int keyOffset,
      int keyLength,
      byte[] value,
      int valueOffset,
      int valueLength);

  /** Writes a key's value from direct buffers. */
  public static native void putDirect(
      long region,
      ByteBuffer key,
      int keyPosition,
      int keyLength,
      ByteBuffer value,
      int valuePosition,
      int valueLength);

  /** Deletes a key. */
  public static native void delete(long region, byte[] key, int keyOffset, int keyLength);

  /** Reads a key's value, or null if it has none. */
  public static native byte[] get(long region, byte[] key, int keyOffset, int keyLength);

  /**
   * Reads a key's value into a direct buffer: returns its size (copied only if it fits the
   * capacity), or -1 if the key has no value.
   */
  public static native int getDirect(
      long region,
      ByteBuffer key,
      int keyPosition,
      int keyLength,
      ByteBuffer value,
      int valuePosition,
      int valueCapacity);

  /** Makes every acknowledged write of the region durable. */
  public static native void regionSync(long region);

  /** Merges the region's writes into its levels within {@code waitMs}; whether all were. */
  public static native boolean regionMergeAhead(long region, long waitMs);

  /** Where the region splits by size, from its index; null if the index cannot say. */
  public static native byte[] regionSplitKey(long region);

  /** Where the region splits by load (its recent requests' median key); null if too few. */
  public static native byte[] regionLoadSplitKey(long region);

  /** Fills {@code out} with the region's counters, in {@code RegionStats} order. */
  public static native void regionStats(long region, long[] out);

  public static native String regionStoppedBy(long region);

  /** The fields of {@code kvs_contents_digest} for what a region serves. */
  public static native long[] regionContentsDigest(long region);

  /** Creates an iterator over a snapshot of the region, below {@code upperBound} if not null. */
  public static native long iteratorCreate(long region, byte[] upperBound);

  /** Destroys an iterator. */
  public static native void iteratorDestroy(long iterator);

  /** Seeks to the first key >= {@code key} (null: the first key); returns whether positioned. */
  public static native boolean iteratorSeek(long iterator, byte[] key);

  /** Moves to the next key; returns whether positioned. */
  public static native boolean iteratorNext(long iterator);

  /** The current key. */
  public static native byte[] iteratorKey(long iterator);

  /** The current value. */
  public static native byte[] iteratorValue(long iterator);

  /**
   * Reads up to {@code limit} pairs (or about {@code maxBytes} of keys and values) from the current
   * position and moves past them. Returns a byte saying whether the iterator is still positioned,
   * then per pair its key size and value size (4 bytes each, little-endian), key and value.
   */
  public static native byte[] iteratorReadPairs(long iterator, int limit, int maxBytes);

  /**
   * Called by the native side only, on error paths: builds the exception for a native status. The
   * one place where native errors become Java exceptions.
   */
  static RuntimeException exceptionFor(int code, String message) {
    return KvsException.of(StatusCode.fromCode(code), message);
  }

  // --- Fabric transport (io.kvs.fabric). Handles are native pointers; 0 is never valid.

  /** Creates a service answering wire requests from attached regions; returns its handle. */
  public static native long serviceCreate();

  /** Serves {@code region} (a region handle) as {@code regionId} at {@code epoch}. */
  public static native void serviceAttach(long service, long regionId, long epoch, long region);

  public static native void serviceAttachPlaced(
      long service,
      long regionId,
      long epoch,
      long region,
      boolean primary,
      byte[] start,
      byte[] end,
      String[] backupHosts,
      int[] backupPorts,
      boolean[] backupJoining,
      int mode,
      int minReplicas,
      String primaryServer,
      boolean joining,
      byte[] streamKey,
      boolean replicated);

  /** Lets the service tap {@code engine}'s regions for send-index replication. */
  public static native void serviceUseEngine(long service, long engine);

  /** The fields of {@code kvs_contents_digest} for what a send-index backup would serve. */
  public static native long[] serviceReplicaDigest(long service, long regionId);

  /**
   * Promotes the send-index replica in engine region {@code name}; returns {segments adopted,
   * drain, close, adopt, open microseconds}.
   */
  public static native long[] servicePromote(
      long service, long regionId, byte[] name, byte[] start, byte[] end);

  /** 1: a primary here whose backups hold every acknowledged write; -1: stream failed; else 0. */
  public static native int serviceBackupsCaughtUp(long service, long regionId);

  /** Each backup's state in placement order: 1 in sync, 0 being caught up, -1 failed. */
  public static native byte[] serviceBackupStates(long service, long regionId);

  public static native String serviceBackupFailure(long service, long regionId, int index);

  /** From now on primaries answer only under a lease, none before the first renewal. */
  public static native void serviceRequireLease(long service);

  /** Primaries answer for {@code validForNanos} from now, then NOT_PRIMARY until renewed. */
  public static native void serviceRenewLease(long service, long validForNanos);

  /** The watchdog's probe of the replication thread: whether it came round since the last one. */
  public static native boolean serviceProbeReplication(long service);

  /** Whether engine region {@code name} holds a send-index replica. */
  public static native boolean serviceHoldsReplica(long service, byte[] name);

  /** The service's replication counters, in {@code kvs_replication_stats} order. */
  public static native long[] serviceReplicationStats(long service);

  /**
   * How far a primary region's backups are behind: three longs per backup ({@code kvs_backup_lag}).
   */
  public static native long[] serviceBackupLags(long service, long regionId);

  /** The service's request metrics, in {@code kvs_service_request_stats} order. */
  public static native long[] serviceRequestStats(long service);

  /** Turns the service's request metrics on or off. */
  public static native void serviceSetRequestMetrics(long service, boolean enabled);

  /** Stops serving {@code regionId}. */
  public static native void serviceDetach(long service, long regionId);

  /** Stops serving {@code regionId}; throws if a primary's last records missed a backup. */
  public static native void serviceDetachFlushed(long service, long regionId);

  /** Detaches flushed, holding the region's requests for its successors up to {@code holdMs}. */
  public static native void serviceDetachSealed(long service, long regionId, int holdMs);

  /** Region {@code regionId} takes over the requests addressed to {@code predecessors}. */
  public static native void serviceTakeOver(long service, long regionId, long[] predecessors);

  /** Answers one encoded request read from a direct buffer range; returns the encoded reply. */
  public static native byte[] serviceHandle(
      long service, ByteBuffer request, int position, int length);

  /** Frees the service; every server using it must be stopped. */
  public static native void serviceDestroy(long service);

  /** Starts a fabric server answering through {@code service}; returns its handle. */
  public static native long fabricServerStart(
      long service,
      String provider,
      String node,
      String host,
      int port,
      int workers,
      byte[] secret,
      byte[] clientSecret);

  /** The server's bootstrap port. */
  public static native int fabricServerPort(long server);

  public static native boolean fabricServerProbe(long server);

  /** Disconnects every client and frees the server. */
  public static native void fabricServerStop(long server);

  /**
   * Starts the native client port serving {@code service} with {@code shards} shard threads;
   * returns its handle. {@code clientSecret} null: any client is served. {@code tlsCertificate}
   * null: plain TCP; else TLS with that PEM certificate chain, {@code tlsPrivateKey} (PKCS#8,
   * unencrypted) and {@code tlsTrustedCa}, requiring client certificates if {@code
   * tlsRequireClientAuth}.
   */
  public static native long clientDoorStart(
      long service,
      String host,
      int port,
      int shards,
      int maxConnections,
      int maxInFlight,
      int maxFrameBytes,
      byte[] clientSecret,
      int handshakeTimeoutMillis,
      String tlsCertificate,
      String tlsPrivateKey,
      String tlsTrustedCa,
      boolean tlsRequireClientAuth);

  /** The port the client door listens on. */
  public static native int clientDoorPort(long door);

  /** The client door's counters, in {@code kvs_client_door_stats} order. */
  public static native long[] clientDoorStats(long door);

  /** The watchdog's probe of the door's shards: whether each ran the previous probe. */
  public static native boolean[] clientDoorProbe(long door);

  /** Stops the client door (waiting for replies still to come) and frees it. */
  public static native void clientDoorStop(long door);

  /** Connects a fabric client; returns its handle. */
  public static native long fabricClientConnect(
      String provider,
      String node,
      String host,
      int port,
      int bufferBytes,
      int timeoutMillis,
      byte[] clientSecret);

  /** Submits an encoded request; returns 0 (OK) or 5 (BUSY), throws for anything else. */
  public static native int fabricClientSubmit(long client, long tag, byte[] request);

  /**
   * Drives the client; returns the finished requests packed (tag u64, status u8, size u32, reply or
   * error message; little-endian), or null if none finished.
   */
  public static native byte[] fabricClientPoll(long client);

  /** Requests submitted and not finished. */
  public static native int fabricClientOutstanding(long client);

  /** Closes the client's connection and frees it. */
  public static native void fabricClientClose(long client);
}
