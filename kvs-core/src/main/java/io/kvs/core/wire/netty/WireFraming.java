package io.kvs.core.wire.netty;

import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import io.kvs.core.wire.WireCodec;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.handler.codec.MessageToByteEncoder;
import io.netty.handler.codec.MessageToMessageDecoder;
import java.nio.ByteOrder;
import java.util.List;

/**
 * The Netty TCP framing of the wire protocol (docs/PROTOCOL.md, "Client TCP framing"): every
 * request and reply is one frame, a little-endian u32 length and then the encoding. A frame longer
 * than the bound fails the channel with a {@link io.netty.handler.codec.TooLongFrameException} as
 * soon as its length is read, without buffering it; a malformed message fails it with a {@link
 * io.netty.handler.codec.DecoderException} whose cause is an {@link
 * io.kvs.core.InvalidRequestException}. The handler after these decides what to do (the server
 * closes the connection and keeps serving everyone else).
 */
public final class WireFraming {
  /** The default bound on a frame: the largest message the protocol allows. */
  public static final int MAX_FRAME_BYTES = WireCodec.MESSAGE_BYTES_MAX;

  /** The frame decoder's name in the pipeline. */
  public static final String FRAME_DECODER = "kvs-frame-decoder";

  /**
   * The frame encoder's name: it comes right after the decoder, and a client's handshake right
   * after it (its frames then pass the encoder on their way out, and frames in reach it before any
   * reply decoder).
   */
  public static final String FRAME_ENCODER = "kvs-frame-encoder";

  private static final int LENGTH_BYTES = 4;

  private WireFraming() {}

  /** Adds what a client needs: requests out, replies in. */
  public static void addClientHandlers(ChannelPipeline pipeline, int maxFrameBytes) {
    addFraming(pipeline, maxFrameBytes);
    pipeline.addLast("kvs-reply-decoder", new ReplyDecoder());
    pipeline.addLast("kvs-request-encoder", new RequestEncoder());
  }

  /** Adds what a server needs: requests in, replies out. */
  public static void addServerHandlers(ChannelPipeline pipeline, int maxFrameBytes) {
    addFraming(pipeline, maxFrameBytes);
    pipeline.addLast("kvs-request-decoder", new RequestDecoder());
    pipeline.addLast("kvs-reply-encoder", new ReplyEncoder());
  }

  private static void addFraming(ChannelPipeline pipeline, int maxFrameBytes) {
    if (maxFrameBytes < WireCodec.REQUEST_HEADER_BYTES) {
      throw new IllegalArgumentException("frame bound too small: " + maxFrameBytes);
    }
    pipeline.addLast(
        FRAME_DECODER,
        new LengthFieldBasedFrameDecoder(
            ByteOrder.LITTLE_ENDIAN, maxFrameBytes, 0, LENGTH_BYTES, 0, LENGTH_BYTES, true));
    pipeline.addLast(
        FRAME_ENCODER, new LengthFieldPrepender(ByteOrder.LITTLE_ENDIAN, LENGTH_BYTES, 0, false));
  }

  /** Frames to requests. */
  static final class RequestDecoder extends MessageToMessageDecoder<ByteBuf> {
    @Override
    protected void decode(ChannelHandlerContext context, ByteBuf frame, List<Object> out) {
      out.add(WireCodec.decodeRequest(frame));
    }
  }

  /** Frames to replies. */
  static final class ReplyDecoder extends MessageToMessageDecoder<ByteBuf> {
    @Override
    protected void decode(ChannelHandlerContext context, ByteBuf frame, List<Object> out) {
      out.add(WireCodec.decodeReply(frame));
    }
  }

  /** Requests to frame bodies (the prepender adds the length). */
  static final class RequestEncoder extends MessageToByteEncoder<Request> {
    @Override
    protected void encode(ChannelHandlerContext context, Request request, ByteBuf out) {
      WireCodec.encode(request, out);
    }
  }

  /** Replies to frame bodies. */
  static final class ReplyEncoder extends MessageToByteEncoder<Reply> {
    @Override
    protected void encode(ChannelHandlerContext context, Reply reply, ByteBuf out) {
      WireCodec.encode(reply, out);
    }
  }
}
