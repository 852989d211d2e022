package io.kvs.core;

/**
 * Why an operation failed. The numeric values are part of the C ABI ({@code kvs_status} in {@code
 * kvs-native/include/kvs/kvs.h}) and must stay equal to it; a test in kvs-native checks both sides
 * agree.
 */
public enum StatusCode {
  /** The operation succeeded. */
  OK(0),
  /** The requested key, region or file does not exist. */
  NOT_FOUND(1),
  /** Stored or received bytes failed a checksum or format check; they are never served. */
  CORRUPTION(2),
  /** The operating system reported an I/O error (including a full device). */
  IO_ERROR(3),
  /** The caller passed an argument outside the documented bounds. */
  INVALID_ARGUMENT(4),
  /** The resource is temporarily unable to take the request; retrying later may succeed. */
  BUSY(5),
  /** The handle or resource was already closed. */
  CLOSED(6),
  /** A key or value is larger than the documented limit. */
  TOO_LARGE(7),
  /** The native library hit a condition its authors consider impossible; a bug report is due. */
  INTERNAL(8),
  /** The server holds the region, but not as its primary; refresh the region map and retry. */
  NOT_PRIMARY(9),
  /** The server does not hold the region, or the key is outside it; refresh and retry. */
  WRONG_REGION(10),
  /** The request's region epoch is not the region's current one; refresh and retry. */
  STALE_EPOCH(11),
  /** The server is shedding load; retry later with backoff. */
  OVERLOADED(12),
  /**
   * Fewer of the region's replicas are in sync than its minimum (the cluster's {@code
   * min-replicas}): the write was refused before it applied; retry later with backoff.
   */
  NOT_ENOUGH_REPLICAS(13);

  private final int code;

  StatusCode(int code) {
    this.code = code;
  }

  /** The stable numeric value used across the JNI boundary and on the wire. */
  public int code() {
    return code;
  }

  /**
   * Returns the status with the given numeric value, or {@link #INTERNAL} for a value this version
   * does not know (a newer native library), so a caller always gets an exception, never a crash.
   */
  public static StatusCode fromCode(int code) {
    for (StatusCode status : values()) {
      if (status.code == code) {
        return status;
      }
    }
    return INTERNAL;
  }
}
