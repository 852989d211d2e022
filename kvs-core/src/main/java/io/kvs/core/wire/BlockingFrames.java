package io.kvs.core.wire;

import io.kvs.core.StatusCode;
import io.kvs.core.security.ClusterSecret;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Optional;

/**
 * The client TCP port's framing (a little-endian u32 length, then the body; docs/PROTOCOL.md,
 * "Client TCP framing") on a plain blocking socket, and the client's side of the handshake over it:
 * for tools and tests that speak to a port byte by byte (a fault campaign's stranger, a test that
 * sends what no client library would). Applications use {@code KvsClient}. Stateless.
 */
public final class BlockingFrames {
  private BlockingFrames() {}

  /** Writes one frame holding {@code body}. */
  public static void write(OutputStream out, byte[] body) throws IOException {
    out.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(body.length).array());
    out.write(body);
    out.flush();
  }

  /**
   * Reads one frame's body.
   *
   * @throws IOException if the stream ends first, or the length is negative or above {@link
   *     WireCodec#MESSAGE_BYTES_MAX}
   */
  public static byte[] read(InputStream input) throws IOException {
    DataInputStream in = new DataInputStream(input);
    byte[] length = new byte[4];
    in.readFully(length);
    int size = ByteBuffer.wrap(length).order(ByteOrder.LITTLE_ENDIAN).getInt();
    if (size < 0 || size > WireCodec.MESSAGE_BYTES_MAX) {
      throw new IOException("a frame of " + Integer.toUnsignedString(size) + " bytes");
    }
    byte[] body = new byte[size];
    in.readFully(body);
    return body;
  }

  /**
   * The client's side of the handshake ({@link ClientHandshake}) on {@code socket}, proving {@code
   * secret} if present; returns the server's Admission (refused ones too, for tests to look at).
   *
   * @throws IOException if the server's Admission claims OK without proving the secret
   */
  public static ClientHandshake.Admission handshake(Socket socket, Optional<ClusterSecret> secret)
      throws IOException {
    ClientHandshake.Challenge challenge =
        ClientHandshake.decodeChallenge(read(socket.getInputStream()));
    ClientHandshake.Hello hello = ClientHandshake.hello(challenge, secret);
    write(socket.getOutputStream(), ClientHandshake.encode(hello));
    ClientHandshake.Admission admission =
        ClientHandshake.decodeAdmission(read(socket.getInputStream()));
    if (admission.status() == StatusCode.OK
        && secret.isPresent()
        && !ClientHandshake.verify(challenge, hello, admission, secret.get())) {
      throw new IOException("the server's proof of the client secret is wrong");
    }
    return admission;
  }
}
