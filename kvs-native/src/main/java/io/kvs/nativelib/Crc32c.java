package io.kvs.nativelib;

import io.kvs.nativelib.internal.NativeMethods;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * CRC32C (Castagnoli), computed by libkvs: the checksum of every KVS log record, index node,
 * metadata block and protocol header. Values equal {@link java.util.zip.CRC32C}'s; this class
 * exists so Java and native code share one implementation and can extend checksums across the
 * boundary.
 *
 * <p>A checksum is an {@code int} holding the unsigned 32-bit value. Thread-safe.
 */
public final class Crc32c {
  static {
    NativeLibrary.load();
  }

  private Crc32c() {}

  /** The checksum of the whole array. */
  public static int compute(byte[] data) {
    return extend(0, data, 0, data.length);
  }

  /** The checksum of {@code data[offset, offset + length)}. */
  public static int compute(byte[] data, int offset, int length) {
    return extend(0, data, offset, length);
  }

  /**
   * Extends {@code crc}, the checksum of some preceding bytes (0 for none), with {@code
   * data[offset, offset + length)}.
   *
   * @throws IndexOutOfBoundsException if the range is not inside the array
   */
  public static int extend(int crc, byte[] data, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, data.length);
    return NativeMethods.crc32cExtendArray(crc, data, offset, length);
  }

  /**
   * The checksum of the buffer's bytes between position and limit. The buffer's position is not
   * changed. Direct buffers are read in place; heap buffers through their array.
   */
  public static int compute(ByteBuffer buffer) {
    return extend(0, buffer);
  }

  /** Extends {@code crc} with the buffer's bytes between position and limit; position unchanged. */
  public static int extend(int crc, ByteBuffer buffer) {
    int position = buffer.position();
    int length = buffer.remaining();
    if (buffer.isDirect()) {
      return NativeMethods.crc32cExtendDirect(crc, buffer, position, length);
    }
    if (buffer.hasArray()) {
      return NativeMethods.crc32cExtendArray(
          crc, buffer.array(), buffer.arrayOffset() + position, length);
    }
    byte[] copy = new byte[length];
    buffer.duplicate().get(copy);
    return NativeMethods.crc32cExtendArray(crc, copy, 0, length);
  }

  /** Whether the CPU's CRC32C instruction is in use. */
  public static boolean isHardwareAccelerated() {
    return NativeMethods.crc32cIsHardwareAccelerated();
  }
}
