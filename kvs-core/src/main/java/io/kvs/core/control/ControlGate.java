package io.kvs.core.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.security.ClusterSecret;
import io.kvs.core.security.RefusalLog;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.timeout.IdleStateEvent;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Optional;

/**
 * The server's gate of the control RPC, between the framing and the command decoder: on connect it
 * sends a challenge frame; with a cluster secret it then lets through one command frame, and only
 * if the frame before it proved the secret for this challenge and this very command
 * (docs/PROTOCOL.md, "Control RPC authentication"). Once that command's reply is written, it sends
 * a fresh challenge and the next command needs a proof of its own: a connection carries one command
 * at a time, each proved for a nonce used once. Anything else (no proof, a wrong one, a second
 * command before the first's reply) gets an {@code INVALID_ARGUMENT} reply starting
 * "unauthenticated:" and the connection closes; nothing is executed. Without a secret commands pass
 * (one at a time) as they come (proof frames are dropped). One instance per connection.
 */
public final class ControlGate extends ChannelDuplexHandler {
  /** The label of a command proof: HMAC(secret, PURPOSE, 0, nonce, command frame bytes). */
  public static final String PURPOSE = "kvs control command v1";

  /**
   * How long the server keeps a connection no command runs on: longer than a client keeps one idle
   * ({@link ControlClient#IDLE}), so that a client rarely sends on a connection the server is
   * closing.
   */
  public static final Duration IDLE = Duration.ofSeconds(120);

  private static final HexFormat HEX = HexFormat.of();

  private enum State {
    AWAITING_PROOF,
    AWAITING_COMMAND,
    /** A command passed; its reply is not written yet. */
    RUNNING,
    REFUSED
  }

  private final Optional<ClusterSecret> secret;
  private final RefusalLog refusals;
  private byte[] nonce = ClusterSecret.nonce();
  private State state = State.AWAITING_PROOF;
  private byte[] proof;

  /** A gate checking proofs of {@code secret}, if present; refusals go to {@code refusals}. */
  public ControlGate(Optional<ClusterSecret> secret, RefusalLog refusals) {
    this.secret = secret;
    this.refusals = refusals;
  }

  /** The challenge frame's body: the nonce and whether a proof is required. */
  static byte[] challenge(byte[] nonce, boolean required) {
    ObjectNode node = JsonNodeFactory.instance.objectNode();
    node.put("challenge", HEX.formatHex(nonce));
    node.put("proofRequired", required);
    return ClusterJson.write(node);
  }

  /** The proof frame's body for {@code proof}. */
  static byte[] proofFrame(byte[] proof) {
    ObjectNode node = JsonNodeFactory.instance.objectNode();
    node.put("proof", HEX.formatHex(proof));
    return ClusterJson.write(node);
  }

  /** The proof in a proof frame, or empty if {@code body} is none (a command, say). */
  static Optional<byte[]> readProof(byte[] body) {
    JsonNode node;
    try {
      node = ClusterJson.read(body);
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
    JsonNode proof = node.get("proof");
    if (proof == null || !proof.isTextual() || node.has("command")) {
      return Optional.empty();
    }
    try {
      return Optional.of(HEX.parseHex(proof.asText()));
    } catch (IllegalArgumentException e) {
      return Optional.of(new byte[0]); // a malformed proof proves nothing
    }
  }

  @Override
  public void channelActive(ChannelHandlerContext context) {
    context.writeAndFlush(Unpooled.wrappedBuffer(challenge(nonce, secret.isPresent())));
    context.fireChannelActive();
  }

  @Override
  public void channelRead(ChannelHandlerContext context, Object message) {
    ByteBuf frame = (ByteBuf) message;
    byte[] body;
    try {
      body = ByteBufUtil.getBytes(frame);
    } finally {
      frame.release();
    }
    switch (state) {
      case AWAITING_PROOF -> {
        if (secret.isEmpty()) {
          if (readProof(body).isEmpty()) {
            state = State.RUNNING;
            context.fireChannelRead(Unpooled.wrappedBuffer(body));
          }
          return;
        }
        Optional<byte[]> offered = readProof(body);
        if (offered.isEmpty()) {
          refuse(
              context,
              "this control port requires a proof of the cluster secret (--secret-file)"
                  + " before a command; none was sent");
          return;
        }
        proof = offered.get();
        state = State.AWAITING_COMMAND;
      }
      case AWAITING_COMMAND -> {
        if (!secret.get().verify(proof, PURPOSE, nonce, body)) {
          refuse(context, "wrong cluster secret (the proof does not match)");
          return;
        }
        state = State.RUNNING;
        context.fireChannelRead(Unpooled.wrappedBuffer(body));
      }
      case RUNNING -> {
        if (secret.isEmpty() && readProof(body).isPresent()) {
          return; // dropped, as every proof without a secret
        }
        refuse(context, "one command at a time per connection: wait for its reply");
      }
      case REFUSED -> {
        // Closing: what else the peer sent is dropped unread.
      }
    }
  }

  /**
   * The reply of the command that passed goes out, then a fresh challenge: the connection may carry
   * the next command, proved anew.
   */
  @Override
  public void write(ChannelHandlerContext context, Object message, ChannelPromise promise) {
    context.write(message, promise);
    if (state == State.RUNNING) {
      nonce = ClusterSecret.nonce();
      proof = null;
      state = State.AWAITING_PROOF;
      context.write(Unpooled.wrappedBuffer(challenge(nonce, secret.isPresent())));
    }
  }

  /** An idle connection (no command running) is closed after {@link #IDLE} without a frame. */
  @Override
  public void userEventTriggered(ChannelHandlerContext context, Object event) {
    if (event instanceof IdleStateEvent && state != State.RUNNING) {
      context.close();
      return;
    }
    context.fireUserEventTriggered(event);
  }

  private void refuse(ChannelHandlerContext context, String reason) {
    state = State.REFUSED;
    refusals.refused(context.channel().remoteAddress(), reason);
    ControlReply reply =
        ControlReply.failed(StatusCode.INVALID_ARGUMENT, "unauthenticated: " + reason);
    context
        .writeAndFlush(Unpooled.wrappedBuffer(ControlJson.encode(reply)))
        .addListener(ChannelFutureListener.CLOSE);
  }
}
