package io.kvs.core.wire.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.InvalidRequestException;
import io.kvs.core.StatusCode;
import io.kvs.core.wire.Opcode;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class WireFramingTest {
  private static EmbeddedChannel client(int maxFrame) {
    EmbeddedChannel channel = new EmbeddedChannel();
    WireFraming.addClientHandlers(channel.pipeline(), maxFrame);
    return channel;
  }

  private static EmbeddedChannel server(int maxFrame) {
    EmbeddedChannel channel = new EmbeddedChannel();
    WireFraming.addServerHandlers(channel.pipeline(), maxFrame);
    return channel;
  }

  /** Moves everything {@code from} wrote to {@code to}'s inbound side, one byte at a time. */
  private static void pipe(EmbeddedChannel from, EmbeddedChannel to) {
    ByteBuf out;
    while ((out = from.readOutbound()) != null) {
      while (out.isReadable()) {
        to.writeInbound(out.readRetainedSlice(1));
      }
      out.release();
    }
  }

  @Test
  void requestsAndRepliesCrossInFramesEvenByteByByte() {
    EmbeddedChannel client = client(WireFraming.MAX_FRAME_BYTES);
    EmbeddedChannel server = server(WireFraming.MAX_FRAME_BYTES);
    byte[] key = "user1".getBytes(StandardCharsets.UTF_8);
    client.writeOutbound(Request.put(41, 3, 7, key, new byte[5000]));
    client.writeOutbound(Request.get(42, 3, 7, key));
    pipe(client, server);
    Request put = server.readInbound();
    Request get = server.readInbound();
    assertThat(put.opcode()).isEqualTo(Opcode.PUT);
    assertThat(put.value()).hasSize(5000);
    assertThat(get.requestId()).isEqualTo(42);
    // Replies may come back in any order.
    server.writeOutbound(Reply.value(42, new byte[] {1, 2}));
    server.writeOutbound(Reply.ok(Opcode.PUT, 41));
    pipe(server, client);
    Reply first = client.readInbound();
    Reply second = client.readInbound();
    assertThat(first.requestId()).isEqualTo(42);
    assertThat(first.value()).containsExactly(1, 2);
    assertThat(second.status()).isEqualTo(StatusCode.OK);
    assertThat(client.finish()).isFalse();
    assertThat(server.finish()).isFalse();
  }

  @Test
  void anOversizedFrameFailsAsSoonAsItsLengthIsRead() {
    EmbeddedChannel server = server(1024);
    ByteBuf header = Unpooled.buffer().writeIntLE(1_000_000);
    assertThatThrownBy(() -> server.writeInbound(header)).isInstanceOf(TooLongFrameException.class);
  }

  @Test
  void aMalformedMessageFailsWithTheCodecsError() {
    EmbeddedChannel server = server(WireFraming.MAX_FRAME_BYTES);
    ByteBuf frame = Unpooled.buffer().writeIntLE(3).writeBytes(new byte[] {1, 2, 3});
    assertThatThrownBy(() -> server.writeInbound(frame))
        .isInstanceOf(DecoderException.class)
        .hasCauseInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("malformed message");
  }
}
