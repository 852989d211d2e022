package io.kvs.core.control;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.handler.codec.MessageToMessageDecoder;
import io.netty.handler.codec.MessageToMessageEncoder;
import io.netty.handler.timeout.IdleStateHandler;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Netty framing of the control RPC: each challenge, proof, command and reply is a frame of a
 * little-endian u32 length and a JSON body, at most {@link #MAX_FRAME_BYTES}. On the server a
 * malformed command fails the channel with a {@link io.netty.handler.codec.DecoderException} whose
 * cause is an {@link IllegalArgumentException}.
 */
public final class ControlFraming {
  /** Bound on a control frame. */
  public static final int MAX_FRAME_BYTES = 1 << 20;

  private ControlFraming() {}

  /**
   * Commands in (those {@code gate} lets through), replies out; a connection idle for {@link
   * ControlGate#IDLE} is closed.
   */
  public static void addServerHandlers(ChannelPipeline pipeline, ControlGate gate) {
    pipeline.addLast(
        "control-idle", new IdleStateHandler(0, 0, ControlGate.IDLE.toSeconds(), TimeUnit.SECONDS));
    addFraming(pipeline);
    pipeline.addLast("control-gate", gate);
    pipeline.addLast("control-command-decoder", new CommandDecoder());
    pipeline.addLast("control-reply-encoder", new ReplyEncoder());
  }

  /** Frames only: the client reads the challenge and the reply as frame bodies. */
  static void addFraming(ChannelPipeline pipeline) {
    pipeline.addLast(
        "control-frame-decoder",
        new LengthFieldBasedFrameDecoder(
            ByteOrder.LITTLE_ENDIAN, MAX_FRAME_BYTES, 0, 4, 0, 4, true));
    pipeline.addLast(
        "control-frame-encoder", new LengthFieldPrepender(ByteOrder.LITTLE_ENDIAN, 4, 0, false));
  }

  private static final class CommandDecoder extends MessageToMessageDecoder<ByteBuf> {
    @Override
    protected void decode(ChannelHandlerContext context, ByteBuf frame, List<Object> out) {
      out.add(ControlJson.decodeCommand(ByteBufUtil.getBytes(frame)));
    }
  }

  private static final class ReplyEncoder extends MessageToMessageEncoder<ControlReply> {
    @Override
    protected void encode(ChannelHandlerContext context, ControlReply reply, List<Object> out) {
      out.add(Unpooled.wrappedBuffer(ControlJson.encode(reply)));
    }
  }
}
