package io.kvs.core.wire.netty;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.security.ClusterSecret;
import io.kvs.core.wire.ClientHandshake;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The client's side of the client TCP handshake ({@link ClientHandshake}), right after the frame
 * decoder: answers the server's Challenge with a Hello (proving {@code secret} if present), checks
 * the Admission (and the server's proof of the secret), then steps out of the pipeline and
 * completes {@link #admitted()}. A refusal, a server that wants a proof this client cannot give or
 * cannot prove the secret back, or a malformed frame fails it with a {@link KvsException} saying
 * why, and closes the connection. One instance per connection.
 */
public final class ClientHandshakeHandler extends ChannelInboundHandlerAdapter {
  /** The handler's name in the pipeline. */
  public static final String NAME = "kvs-handshake";

  private final Optional<ClusterSecret> secret;
  private final String server;
  private final CompletableFuture<Void> admitted = new CompletableFuture<>();
  private ClientHandshake.Challenge challenge;
  private ClientHandshake.Hello hello;

  /** A handshake proving {@code secret} (if present) to {@code server} (named in errors). */
  public ClientHandshakeHandler(Optional<ClusterSecret> secret, String server) {
    this.secret = secret;
    this.server = server;
  }

  /** Completes once the server admitted this client; fails with why not. */
  public CompletableFuture<Void> admitted() {
    return admitted;
  }

  @Override
  public void channelRead(ChannelHandlerContext context, Object message) {
    if (admitted.isDone()) {
      context.fireChannelRead(message); // raced the removal: a reply, pass it on
      return;
    }
    byte[] body = ByteBufUtil.getBytes((ByteBuf) message);
    ReferenceCountUtil.release(message);
    try {
      if (challenge == null) {
        challenge = ClientHandshake.decodeChallenge(body);
        String refusal = ClientHandshake.clientRefusal(challenge, secret);
        if (refusal != null) {
          fail(context, refusal);
          return;
        }
        hello = ClientHandshake.hello(challenge, secret);
        context.writeAndFlush(Unpooled.wrappedBuffer(ClientHandshake.encode(hello)));
        return;
      }
      ClientHandshake.Admission admission = ClientHandshake.decodeAdmission(body);
      if (admission.status() != StatusCode.OK) {
        fail(
            context,
            admission.status(),
            "the server refused the connection: " + admission.message());
        return;
      }
      if (secret.isPresent()
          && !ClientHandshake.verify(challenge, hello, admission, secret.get())) {
        fail(context, "the server's proof of the client secret is wrong");
        return;
      }
      context.pipeline().remove(this);
      admitted.complete(null);
    } catch (IllegalArgumentException e) {
      fail(context, e.getMessage());
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext context) {
    if (!admitted.isDone()) {
      admitted.completeExceptionally(
          new KvsException(
              StatusCode.IO_ERROR, server + " closed the connection during the handshake"));
    }
    context.fireChannelInactive();
  }

  private void fail(ChannelHandlerContext context, String why) {
    fail(context, StatusCode.INVALID_ARGUMENT, why);
  }

  private void fail(ChannelHandlerContext context, StatusCode status, String why) {
    admitted.completeExceptionally(
        new KvsException(status, "handshake with " + server + ": " + why));
    context.close();
  }
}
