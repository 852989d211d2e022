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

  /**
   * Called by the native side only, on error paths: builds the exception for a native status. The
   * one place where native errors become Java exceptions.
   */
  static RuntimeException exceptionFor(int code, String message) {
    return KvsException.of(StatusCode.fromCode(code), message);
  }
}
