package io.kvs.bench.engine;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * YCSB-style keys: record number {@code n} becomes {@code "user"} followed by a hash of {@code n},
 * so that keys inserted in order land all over the key space (YCSB's default, non-ordered inserts).
 * The hash is the 64-bit FNV-1a of the number's eight bytes, little-endian first, written as 20
 * zero-padded decimal digits of its unsigned value: every key is exactly {@value #KEY_BYTES} bytes,
 * the ~24 B keys of the design brief and the seeds.
 */
public final class Keys {
  /** Bytes of every key. */
  public static final int KEY_BYTES = 24;

  private static final byte[] PREFIX = "user".getBytes(StandardCharsets.US_ASCII);
  private static final long FNV_OFFSET_BASIS = 0xcbf29ce484222325L;
  private static final long FNV_PRIME = 0x100000001b3L;

  private Keys() {}

  /** FNV-1a (64 bit) of the eight bytes of {@code value}, least significant first. */
  public static long fnv1a64(long value) {
    long hash = FNV_OFFSET_BASIS;
    for (int i = 0; i < 8; i++) {
      hash ^= (value >>> (8 * i)) & 0xff;
      hash *= FNV_PRIME;
    }
    return hash;
  }

  /** Writes the key of record {@code number} into {@code out} at offset 0. */
  public static void write(long number, byte[] out) {
    System.arraycopy(PREFIX, 0, out, 0, PREFIX.length);
    long hash = fnv1a64(number);
    // Unsigned decimal, right to left: the first digit separately, as the value may exceed
    // Long.MAX_VALUE.
    long quotient = Long.divideUnsigned(hash, 10);
    int remainder = (int) (hash - quotient * 10);
    out[KEY_BYTES - 1] = (byte) ('0' + remainder);
    for (int i = KEY_BYTES - 2; i >= PREFIX.length; i--) {
      out[i] = (byte) ('0' + quotient % 10);
      quotient /= 10;
    }
  }

  /** The key of record {@code number}. */
  public static byte[] of(long number) {
    byte[] key = new byte[KEY_BYTES];
    write(number, key);
    return key;
  }

  /** Writes the key of record {@code number} into {@code out} (cleared first), flipped to read. */
  public static void write(long number, byte[] scratch, ByteBuffer out) {
    write(number, scratch);
    out.clear();
    out.put(scratch, 0, KEY_BYTES);
    out.flip();
  }

  /** The key as text, for messages. */
  public static String toString(long number) {
    return new String(of(number), StandardCharsets.US_ASCII);
  }
}
