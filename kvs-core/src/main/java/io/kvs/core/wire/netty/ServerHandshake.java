package io.kvs.core.wire.netty;

import io.kvs.core.StatusCode;
import io.kvs.core.security.ClusterSecret;
import io.kvs.core.security.RefusalLog;
import io.kvs.core.wire.ClientHandshake;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The server's side of the client TCP handshake ({@link ClientHandshake}), between the framing and
 * the request handler: on connect it sends a Challenge; the first frame must be a Hello, proving
 * the client secret if there is one; then it sends the Admission and steps out of the pipeline, so
 * requests reach the handler after it. A client that proves nothing when a proof is required, sends
 * anything else first, or says nothing within {@code timeout} is refused (an Admission saying why
 * where it makes sense) and closed; nothing it sent is executed. One instance per connection.
 */
public final class ServerHandshake extends ChannelInboundHandlerAdapter {
  private final Optional<ClusterSecret> secret;
  private final RefusalLog refusals;
  private final Duration timeout;
  private final ClientHandshake.Challenge challenge;
  private boolean done;
  private ScheduledFuture<?> deadline;

  /** Checks clients against {@code secret} if present; refusals are logged to {@code refusals}. */
  public ServerHandshake(Optional<ClusterSecret> secret, RefusalLog refusals, Duration timeout) {
    this.secret = secret;
    this.refusals = refusals;
    this.timeout = timeout;
    this.challenge = ClientHandshake.challenge(secret);
  }

  @Override
  public void channelActive(ChannelHandlerContext context) {
    context.writeAndFlush(Unpooled.wrappedBuffer(ClientHandshake.encode(challenge)));
    deadline =
        context
            .executor()
            .schedule(
                () -> {
                  if (!done) {
                    refuse(context, "no handshake within " + timeout.toMillis() + " ms");
                  }
                },
                timeout.toMillis(),
                TimeUnit.MILLISECONDS);
    context.fireChannelActive();
  }

  @Override
  public void channelRead(ChannelHandlerContext context, Object message) {
    if (done) {
      ReferenceCountUtil.release(message); // refused: nothing more is read
      return;
    }
    ClientHandshake.Hello hello;
    try {
      hello = ClientHandshake.decodeHello(ByteBufUtil.getBytes((ByteBuf) message));
    } catch (IllegalArgumentException e) {
      refuse(context, "the first frame is no handshake Hello: " + e.getMessage());
      return;
    } finally {
      ReferenceCountUtil.release(message);
    }
    if (secret.isPresent() && !ClientHandshake.verify(challenge, hello, secret.get())) {
      refuse(
          context,
          "authentication failed: the client does not hold this cluster's client secret (wrong or"
              + " missing --client-secret-file)");
      return;
    }
    done = true;
    deadline.cancel(false);
    context.writeAndFlush(
        Unpooled.wrappedBuffer(
            ClientHandshake.encode(ClientHandshake.admit(challenge, hello, secret))));
    context.pipeline().remove(this);
  }

  @Override
  public void channelInactive(ChannelHandlerContext context) {
    if (deadline != null) {
      deadline.cancel(false);
    }
    context.fireChannelInactive();
  }

  private void refuse(ChannelHandlerContext context, String why) {
    done = true;
    if (deadline != null) {
      deadline.cancel(false);
    }
    refusals.refused(context.channel().remoteAddress(), why);
    context
        .writeAndFlush(
            Unpooled.wrappedBuffer(
                ClientHandshake.encode(
                    ClientHandshake.refuse(
                        StatusCode.INVALID_ARGUMENT, "unauthenticated: " + why))))
        .addListener(ChannelFutureListener.CLOSE);
  }
}
