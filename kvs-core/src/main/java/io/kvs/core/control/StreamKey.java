package io.kvs.core.control;

import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;

/**
 * A region's stream key at one epoch (docs/PROTOCOL.md, "Control RPC" and "Value-log replication"):
 * 32 random bytes the master draws and gives, with the open command, to the region's primary and
 * every backup, and to nobody else. The primary proves it when it opens a replication stream into a
 * backup, so only the group's primary can replicate into a backup, whatever secret a stranger
 * holds. Never logged, never stored in ZooKeeper (which anyone may read). Immutable.
 */
public final class StreamKey {
  /** A key's size in bytes. */
  public static final int BYTES = 32;

  private static final SecureRandom RANDOM = new SecureRandom();

  private final byte[] bytes;

  private StreamKey(byte[] bytes) {
    this.bytes = bytes;
  }

  /** A fresh random key. */
  public static StreamKey random() {
    byte[] bytes = new byte[BYTES];
    RANDOM.nextBytes(bytes);
    return new StreamKey(bytes);
  }

  /**
   * The key of {@code bytes} (copied).
   *
   * @throws IllegalArgumentException unless it has {@link #BYTES} bytes
   */
  public static StreamKey of(byte[] bytes) {
    if (bytes.length != BYTES) {
      throw new IllegalArgumentException(
          "a stream key has " + BYTES + " bytes, not " + bytes.length);
    }
    return new StreamKey(bytes.clone());
  }

  /** The key of its base64 text ({@link #base64()}). */
  public static StreamKey ofBase64(String text) {
    try {
      return of(Base64.getDecoder().decode(text));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("malformed stream key: " + e.getMessage(), e);
    }
  }

  /** A copy of the key's bytes. */
  public byte[] bytes() {
    return bytes.clone();
  }

  /** The key as base64 text (for the control RPC's JSON). */
  public String base64() {
    return Base64.getEncoder().encodeToString(bytes);
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof StreamKey key && Arrays.equals(bytes, key.bytes);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(bytes);
  }

  /** Never the key itself: commands are logged. */
  @Override
  public String toString() {
    return "StreamKey[redacted]";
  }
}
