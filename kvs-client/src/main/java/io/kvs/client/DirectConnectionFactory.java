package io.kvs.client;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.security.ClusterSecret;
import io.kvs.core.wire.BlockingFrames;
import io.kvs.core.wire.ClientHandshake;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.channels.SocketChannel;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * {@link DirectConnection}s: plain TCP without an I/O thread. Connecting (and the client handshake,
 * proving the client secret if configured) runs on the client's blocking pool, which also runs the
 * connections' reader tasks; a connection is handed out only once the server admitted it, and a
 * refusal fails the connect with the handshake's error.
 */
final class DirectConnectionFactory implements ConnectionFactory {
  private static final int CONNECT_TIMEOUT_MILLIS = 3000;
  private static final int HANDSHAKE_TIMEOUT_MILLIS = 5000;

  private final Executor blocking;
  private final Optional<ClusterSecret> clientSecret;

  DirectConnectionFactory(Executor blocking, Optional<ClusterSecret> clientSecret) {
    this.blocking = blocking;
    this.clientSecret = clientSecret;
  }

  @Override
  public String endpoint(ServerInfo server) {
    return ConnectionFactory.tcpEndpoint(server);
  }

  @Override
  public CompletableFuture<Connection> connect(ServerInfo server) {
    CompletableFuture<Connection> result = new CompletableFuture<>();
    try {
      blocking.execute(
          () -> {
            try {
              result.complete(open(server));
            } catch (IOException | RuntimeException e) {
              result.completeExceptionally(e);
            }
          });
    } catch (RejectedExecutionException e) {
      result.completeExceptionally(ClientContext.closedError());
    }
    return result;
  }

  private Connection open(ServerInfo server) throws IOException {
    String name = server.host() + ":" + server.tcpPort();
    SocketChannel channel = SocketChannel.open();
    try {
      channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
      Socket socket = channel.socket();
      socket.connect(
          new InetSocketAddress(server.host(), server.tcpPort()), CONNECT_TIMEOUT_MILLIS);
      socket.setSoTimeout(HANDSHAKE_TIMEOUT_MILLIS);
      handshake(socket, name);
      channel.configureBlocking(false);
      return new DirectConnection(channel, name, blocking);
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
  }

  /** The client's side of the handshake ({@link ClientHandshake}) on the still-blocking socket. */
  private void handshake(Socket socket, String name) throws IOException {
    try {
      ClientHandshake.Challenge challenge =
          ClientHandshake.decodeChallenge(BlockingFrames.read(socket.getInputStream()));
      String refusal = ClientHandshake.clientRefusal(challenge, clientSecret);
      if (refusal != null) {
        throw new KvsException(
            StatusCode.INVALID_ARGUMENT, "handshake with " + name + ": " + refusal);
      }
      ClientHandshake.Hello hello = ClientHandshake.hello(challenge, clientSecret);
      BlockingFrames.write(socket.getOutputStream(), ClientHandshake.encode(hello));
      ClientHandshake.Admission admission =
          ClientHandshake.decodeAdmission(BlockingFrames.read(socket.getInputStream()));
      if (admission.status() != StatusCode.OK) {
        throw new KvsException(
            admission.status(),
            "handshake with "
                + name
                + ": the server refused the connection: "
                + admission.message());
      }
      if (clientSecret.isPresent()
          && !ClientHandshake.verify(challenge, hello, admission, clientSecret.get())) {
        throw new KvsException(
            StatusCode.INVALID_ARGUMENT,
            "handshake with " + name + ": the server's proof of the client secret is wrong");
      }
    } catch (java.io.EOFException e) {
      throw new KvsException(
          StatusCode.IO_ERROR, name + " closed the connection during the handshake", e);
    } catch (SocketTimeoutException e) {
      throw new KvsException(
          StatusCode.IO_ERROR,
          "handshake with " + name + ": no admission within " + HANDSHAKE_TIMEOUT_MILLIS + " ms",
          e);
    } catch (IllegalArgumentException e) {
      throw new KvsException(
          StatusCode.INVALID_ARGUMENT, "handshake with " + name + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    // nothing shared: the blocking pool belongs to the client
  }
}
