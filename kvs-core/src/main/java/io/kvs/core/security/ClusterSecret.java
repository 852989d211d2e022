package io.kvs.core.security;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Set;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster secret: random bytes every process of a cluster reads from a file of its own ({@code
 * --secret-file}), with which peers prove to each other that they belong to the cluster by
 * answering a random challenge with HMAC-SHA256 (docs/OPERATIONS.md, "Security"). The bytes never
 * travel. Immutable and thread-safe.
 */
public final class ClusterSecret {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterSecret.class);

  /** Bytes a secret has at least: 128 bits, what HMAC-SHA256 needs to resist guessing. */
  public static final int SECRET_BYTES_MIN = 16;

  /** Bytes a secret has at most: a key file, not a data file. */
  public static final int SECRET_BYTES_MAX = 1024;

  /** Bytes a generated secret has: one SHA-256 block's worth of key. */
  public static final int GENERATED_SECRET_BYTES = 32;

  /** Bytes of a challenge nonce. */
  public static final int NONCE_BYTES = 32;

  private static final SecureRandom RANDOM = new SecureRandom();

  private final byte[] bytes;

  private ClusterSecret(byte[] bytes) {
    if (bytes.length < SECRET_BYTES_MIN || bytes.length > SECRET_BYTES_MAX) {
      throw new IllegalArgumentException(
          "a cluster secret has "
              + SECRET_BYTES_MIN
              + " to "
              + SECRET_BYTES_MAX
              + " bytes, not "
              + bytes.length);
    }
    this.bytes = bytes.clone();
  }

  /** A secret of these bytes (tests; processes read theirs with {@link #read}). */
  public static ClusterSecret of(byte[] bytes) {
    return new ClusterSecret(bytes);
  }

  /**
   * Reads the secret in {@code file} (its bytes as they are, so any random file works). Warns when
   * the file is readable by others than its owner.
   *
   * @throws IllegalArgumentException if the file cannot be read or has too few or too many bytes
   */
  public static ClusterSecret read(Path file) {
    byte[] content;
    try {
      content = Files.readAllBytes(file);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read the cluster secret file " + file + ": " + e);
    }
    try {
      Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(file);
      if (permissions.stream().anyMatch(p -> !p.name().startsWith("OWNER_"))) {
        LOG.warn(
            "the cluster secret file {} is readable by others than its owner ({}); chmod 600 it",
            file,
            PosixFilePermissions.toString(permissions));
      }
    } catch (IOException | UnsupportedOperationException e) {
      // Not a POSIX file system: nothing to check.
    }
    try {
      return new ClusterSecret(content);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("cluster secret file " + file + ": " + e.getMessage());
    }
  }

  /**
   * Writes a new random secret of {@link #GENERATED_SECRET_BYTES} to {@code file}, readable and
   * writable by its owner only, and returns it.
   */
  public static ClusterSecret generate(Path file) {
    byte[] fresh = new byte[GENERATED_SECRET_BYTES];
    RANDOM.nextBytes(fresh);
    try {
      Files.deleteIfExists(file);
      Files.createFile(
          file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      Files.write(file, fresh);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the cluster secret file " + file, e);
    }
    return new ClusterSecret(fresh);
  }

  /** A fresh random challenge of {@link #NONCE_BYTES}. */
  public static byte[] nonce() {
    byte[] nonce = new byte[NONCE_BYTES];
    RANDOM.nextBytes(nonce);
    return nonce;
  }

  /**
   * HMAC-SHA256 under this secret of {@code purpose} (a label that keeps a proof made for one use
   * from being replayed for another), a zero byte, then {@code parts} in order.
   */
  public byte[] prove(String purpose, byte[]... parts) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(bytes, "HmacSHA256"));
      mac.update(purpose.getBytes(StandardCharsets.US_ASCII));
      mac.update((byte) 0);
      for (byte[] part : parts) {
        mac.update(part);
      }
      return mac.doFinal();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
    }
  }

  /** Whether {@code proof} is this secret's proof of {@code purpose} and {@code parts}. */
  public boolean verify(byte[] proof, String purpose, byte[]... parts) {
    // Constant time: how much of a guess matched must not leak through timing.
    return proof != null && MessageDigest.isEqual(prove(purpose, parts), proof);
  }

  /** A copy of the bytes, for the native fabric bootstrap. */
  public byte[] bytes() {
    return bytes.clone();
  }

  @Override
  public String toString() {
    return "ClusterSecret[" + bytes.length + " bytes]";
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof ClusterSecret secret && Arrays.equals(bytes, secret.bytes);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(bytes);
  }
}
