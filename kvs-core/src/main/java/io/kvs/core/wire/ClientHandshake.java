package io.kvs.core.wire;

import io.kvs.core.StatusCode;
import io.kvs.core.security.ClusterSecret;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * The client TCP port's handshake (docs/PROTOCOL.md, "Client TCP handshake"): before any request, a
 * client proves the client secret, and the server proves it back. Three frames, each in the port's
 * framing (a little-endian u32 length, then the body), all integers little-endian:
 *
 * <pre>
 *   Challenge (server -> client), 44 bytes: the fabric bootstrap's Challenge
 *     u32 magic "KVSC", u8 version 3, u8 flags (bit 0: a proof of the client secret is required),
 *     u16 zero, 32 server nonce, u32 CRC32C of the bytes before
 *   Hello (client -> server), 76 bytes:
 *     u32 magic "KVSA", u8 version 1, u8 zero[3], 32 client nonce,
 *     32 proof = HMAC-SHA256(client secret, "kvs tcp hello v1" 0x00 server nonce client nonce)
 *     (zeros without a secret), u32 CRC32C
 *   Admission (server -> client), 44 + m bytes:
 *     u32 magic "KVSK", u8 version 1, u8 status (0 OK, else a status code), u16 m,
 *     m bytes of UTF-8 message (why it was refused; empty if OK),
 *     32 proof = HMAC-SHA256(client secret, "kvs tcp admit v1" 0x00 client nonce server nonce)
 *     (zeros if refused or without a secret), u32 CRC32C
 * </pre>
 *
 * A refused client gets its Admission and the connection closes; nothing it sent is executed. The
 * purposes differ from each other and from the fabric bootstrap's, so no proof can be replayed as
 * another; the nonces are fresh per connection. Immutable values and pure functions.
 */
public final class ClientHandshake {
  /** Size of a Challenge's body. */
  public static final int CHALLENGE_BYTES = 44;

  /** Size of a Hello's body. */
  public static final int HELLO_BYTES = 76;

  /** The largest Admission message, in bytes. */
  public static final int MESSAGE_BYTES_MAX = 1024;

  static final String HELLO_PURPOSE = "kvs tcp hello v1";
  static final String ADMIT_PURPOSE = "kvs tcp admit v1";

  private static final int CHALLENGE_MAGIC = 0x43535654; // "KVSC"
  private static final int HELLO_MAGIC = 0x41535654; // "KVSA"
  private static final int ADMISSION_MAGIC = 0x4b535654; // "KVSK"
  private static final int CHALLENGE_VERSION = 3;
  private static final int VERSION = 1;
  private static final int NONCE_BYTES = 32;
  private static final int PROOF_BYTES = 32;

  private ClientHandshake() {}

  /** A server's Challenge: its nonce, and whether clients must prove the client secret. */
  public record Challenge(byte[] nonce, boolean proofRequired) {}

  /** A client's Hello: its nonce and proof. */
  public record Hello(byte[] nonce, byte[] proof) {}

  /** A server's Admission: OK, or the status and message of a refusal, and its proof. */
  public record Admission(StatusCode status, String message, byte[] proof) {}

  /** A fresh Challenge, requiring a proof if {@code secret} is present. */
  public static Challenge challenge(Optional<ClusterSecret> secret) {
    return new Challenge(ClusterSecret.nonce(), secret.isPresent());
  }

  public static byte[] encode(Challenge challenge) {
    ByteBuffer out = buffer(CHALLENGE_BYTES);
    out.putInt(CHALLENGE_MAGIC).put((byte) CHALLENGE_VERSION);
    out.put((byte) (challenge.proofRequired() ? 1 : 0)).putShort((short) 0);
    out.put(challenge.nonce());
    return seal(out);
  }

  /**
   * @throws IllegalArgumentException if {@code body} is not a Challenge of this version
   */
  public static Challenge decodeChallenge(byte[] body) {
    ByteBuffer in = checked(body, CHALLENGE_BYTES, CHALLENGE_MAGIC, CHALLENGE_VERSION);
    int flags = in.get() & 0xff;
    if ((flags & ~1) != 0 || in.getShort() != 0) {
      throw new IllegalArgumentException("handshake: a Challenge with unknown flags");
    }
    byte[] nonce = new byte[NONCE_BYTES];
    in.get(nonce);
    return new Challenge(nonce, (flags & 1) != 0);
  }

  /**
   * Why a client holding {@code secret} (if present) must not answer {@code challenge}, or null if
   * it may: the server wants a proof this client cannot give, or wants none and so cannot prove the
   * secret back (a stranger posing as the cluster).
   */
  public static String clientRefusal(Challenge challenge, Optional<ClusterSecret> secret) {
    if (challenge.proofRequired() && secret.isEmpty()) {
      return "the server requires the client secret and this client has none";
    }
    if (!challenge.proofRequired() && secret.isPresent()) {
      return "the server requires no client secret, so it cannot prove it is this cluster's;"
          + " refusing to connect";
    }
    return null;
  }

  /** The Hello answering {@code challenge}, proving {@code secret} if present. */
  public static Hello hello(Challenge challenge, Optional<ClusterSecret> secret) {
    byte[] nonce = ClusterSecret.nonce();
    byte[] proof =
        secret
            .map(s -> s.prove(HELLO_PURPOSE, challenge.nonce(), nonce))
            .orElse(new byte[PROOF_BYTES]);
    return new Hello(nonce, proof);
  }

  public static byte[] encode(Hello hello) {
    ByteBuffer out = buffer(HELLO_BYTES);
    out.putInt(HELLO_MAGIC).put((byte) VERSION).put(new byte[3]);
    out.put(hello.nonce()).put(hello.proof());
    return seal(out);
  }

  /**
   * @throws IllegalArgumentException if {@code body} is not a Hello of this version
   */
  public static Hello decodeHello(byte[] body) {
    ByteBuffer in = checked(body, HELLO_BYTES, HELLO_MAGIC, VERSION);
    if (in.get() != 0 || in.get() != 0 || in.get() != 0) {
      throw new IllegalArgumentException("handshake: a Hello with unknown fields");
    }
    byte[] nonce = new byte[NONCE_BYTES];
    byte[] proof = new byte[PROOF_BYTES];
    in.get(nonce).get(proof);
    return new Hello(nonce, proof);
  }

  /** Whether {@code hello} answers {@code challenge} with a proof of {@code secret}. */
  public static boolean verify(Challenge challenge, Hello hello, ClusterSecret secret) {
    return secret.verify(hello.proof(), HELLO_PURPOSE, challenge.nonce(), hello.nonce());
  }

  /** The server's Admission of a client whose hello checked out. */
  public static Admission admit(Challenge challenge, Hello hello, Optional<ClusterSecret> secret) {
    byte[] proof =
        secret
            .map(s -> s.prove(ADMIT_PURPOSE, hello.nonce(), challenge.nonce()))
            .orElse(new byte[PROOF_BYTES]);
    return new Admission(StatusCode.OK, "", proof);
  }

  /** A refusal saying {@code why}. */
  public static Admission refuse(StatusCode status, String why) {
    return new Admission(status, why, new byte[PROOF_BYTES]);
  }

  /** Whether {@code admission} proves {@code secret} to the client that sent {@code hello}. */
  public static boolean verify(
      Challenge challenge, Hello hello, Admission admission, ClusterSecret secret) {
    return secret.verify(admission.proof(), ADMIT_PURPOSE, hello.nonce(), challenge.nonce());
  }

  public static byte[] encode(Admission admission) {
    byte[] message = admission.message().getBytes(StandardCharsets.UTF_8);
    int size = Math.min(message.length, MESSAGE_BYTES_MAX);
    ByteBuffer out = buffer(8 + size + PROOF_BYTES + 4);
    out.putInt(ADMISSION_MAGIC).put((byte) VERSION).put((byte) admission.status().code());
    out.putShort((short) size).put(message, 0, size).put(admission.proof());
    return seal(out);
  }

  /**
   * @throws IllegalArgumentException if {@code body} is not an Admission of this version
   */
  public static Admission decodeAdmission(byte[] body) {
    if (body.length < 8 + PROOF_BYTES + 4) {
      throw new IllegalArgumentException("handshake: an Admission of " + body.length + " bytes");
    }
    int size = ByteBuffer.wrap(body, 6, 2).order(ByteOrder.LITTLE_ENDIAN).getShort() & 0xffff;
    if (size > MESSAGE_BYTES_MAX) {
      throw new IllegalArgumentException("handshake: an Admission message of " + size + " bytes");
    }
    ByteBuffer in = checked(body, 8 + size + PROOF_BYTES + 4, ADMISSION_MAGIC, VERSION);
    StatusCode status = StatusCode.fromCode(in.get() & 0xff);
    in.getShort();
    byte[] message = new byte[size];
    byte[] proof = new byte[PROOF_BYTES];
    in.get(message).get(proof);
    return new Admission(status, new String(message, StandardCharsets.UTF_8), proof);
  }

  private static ByteBuffer buffer(int size) {
    return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
  }

  private static byte[] seal(ByteBuffer out) {
    CRC32C crc = new CRC32C();
    crc.update(out.array(), 0, out.position());
    out.putInt((int) crc.getValue());
    return out.array();
  }

  /** {@code body} checked for size, magic, version and CRC; positioned after the version. */
  private static ByteBuffer checked(byte[] body, int size, int magic, int version) {
    if (body.length != size) {
      throw new IllegalArgumentException(
          "handshake: a message of " + body.length + " bytes, not " + size);
    }
    ByteBuffer in = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
    if (in.getInt() != magic) {
      throw new IllegalArgumentException("handshake: not a KVS client port");
    }
    int found = in.get() & 0xff;
    if (found != version) {
      throw new IllegalArgumentException(
          "handshake: a message of version "
              + found
              + "; this end speaks version "
              + version
              + " (client and server run different releases)");
    }
    CRC32C crc = new CRC32C();
    crc.update(body, 0, size - 4);
    if ((int) crc.getValue() != in.getInt(size - 4)) {
      throw new IllegalArgumentException("handshake: a message that fails its checksum");
    }
    return in;
  }
}
