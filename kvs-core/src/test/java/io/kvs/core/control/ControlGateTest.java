package io.kvs.core.control;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.security.ClusterSecret;
import io.kvs.core.security.RefusalLog;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The control gate alone: what it lets through to the command decoder, and what it refuses. */
class ControlGateTest {
  private static final ClusterSecret SECRET =
      ClusterSecret.of("control-gate-test-secret".getBytes(StandardCharsets.UTF_8));
  private static final byte[] CLOSE =
      "{\"command\":\"close\",\"regionId\":1,\"epoch\":12}".getBytes(StandardCharsets.UTF_8);

  private final RefusalLog refusals =
      new RefusalLog(LoggerFactory.getLogger(ControlGateTest.class), "test connection");

  private EmbeddedChannel gate(Optional<ClusterSecret> secret) {
    return new EmbeddedChannel(new ControlGate(secret, refusals));
  }

  private static byte[] body(ByteBuf frame) {
    try {
      return ByteBufUtil.getBytes(frame);
    } finally {
      frame.release();
    }
  }

  private static byte[] nonce(EmbeddedChannel channel) {
    JsonNode challenge = ClusterJson.read(body(channel.readOutbound()));
    return HexFormat.of().parseHex(ClusterJson.text(challenge, "challenge"));
  }

  @Test
  void aCommandProvedWithTheSecretPassesOnce() {
    EmbeddedChannel channel = gate(Optional.of(SECRET));
    byte[] proof = SECRET.prove(ControlGate.PURPOSE, nonce(channel), CLOSE);
    channel.writeInbound(Unpooled.wrappedBuffer(ControlGate.proofFrame(proof)));
    channel.writeInbound(Unpooled.wrappedBuffer(CLOSE));
    assertThat(body(channel.readInbound())).isEqualTo(CLOSE);
    assertThat(refusals.refusals()).isZero();
    // Anything before the first's reply (a proof again, a second command) is refused.
    channel.writeInbound(Unpooled.wrappedBuffer(ControlGate.proofFrame(proof)));
    assertThat(channel.inboundMessages()).isEmpty();
    assertThat(refusals.refusals()).isEqualTo(1);
    assertThat(channel.isOpen()).isFalse();
    channel.finishAndReleaseAll();
  }

  @Test
  void afterEachReplyAFreshChallengeAndTheNextCommandNeedsAProofOfItsOwn() {
    EmbeddedChannel channel = gate(Optional.of(SECRET));
    byte[] first = nonce(channel);
    byte[] proof = SECRET.prove(ControlGate.PURPOSE, first, CLOSE);
    channel.writeInbound(Unpooled.wrappedBuffer(ControlGate.proofFrame(proof)));
    channel.writeInbound(Unpooled.wrappedBuffer(CLOSE));
    assertThat(body(channel.readInbound())).isEqualTo(CLOSE);
    byte[] reply = ControlJson.encode(ControlReply.ok());
    channel.writeOutbound(Unpooled.wrappedBuffer(reply));
    assertThat(body(channel.readOutbound())).isEqualTo(reply);
    byte[] second = nonce(channel); // the challenge follows the reply
    assertThat(second).isNotEqualTo(first);

    byte[] proved = SECRET.prove(ControlGate.PURPOSE, second, CLOSE);
    channel.writeInbound(Unpooled.wrappedBuffer(ControlGate.proofFrame(proved)));
    channel.writeInbound(Unpooled.wrappedBuffer(CLOSE));
    assertThat(body(channel.readInbound())).isEqualTo(CLOSE);
    channel.writeOutbound(Unpooled.wrappedBuffer(reply));
    assertThat(body(channel.readOutbound())).isEqualTo(reply);
    nonce(channel);

    // The first challenge's proof, replayed, proves nothing now: refused, nothing passes.
    channel.writeInbound(Unpooled.wrappedBuffer(ControlGate.proofFrame(proof)));
    channel.writeInbound(Unpooled.wrappedBuffer(CLOSE));
    assertThat(channel.inboundMessages()).isEmpty();
    assertThat(ControlJson.decodeReply(body(channel.readOutbound())).message())
        .contains("wrong cluster secret");
    assertThat(channel.isOpen()).isFalse();
    channel.finishAndReleaseAll();
  }

  @Test
  void aRawCommandIsRefusedAndNotPassedOn() {
    EmbeddedChannel channel = gate(Optional.of(SECRET));
    nonce(channel);
    channel.writeInbound(Unpooled.wrappedBuffer(CLOSE));
    assertThat(channel.inboundMessages()).isEmpty();
    ControlReply reply = ControlJson.decodeReply(body(channel.readOutbound()));
    assertThat(reply.status()).isEqualTo(StatusCode.INVALID_ARGUMENT);
    assertThat(reply.message()).startsWith("unauthenticated:");
    assertThat(channel.isOpen()).isFalse();
    channel.finishAndReleaseAll();
  }

  @Test
  void aProofOfAnotherCommandOrSecretIsRefused() {
    EmbeddedChannel channel = gate(Optional.of(SECRET));
    byte[] nonce = nonce(channel);
    byte[] listProof =
        SECRET.prove(ControlGate.PURPOSE, nonce, "{\"command\":\"list\"}".getBytes());
    channel.writeInbound(Unpooled.wrappedBuffer(ControlGate.proofFrame(listProof)));
    channel.writeInbound(Unpooled.wrappedBuffer(CLOSE));
    assertThat(channel.inboundMessages()).isEmpty();
    assertThat(ControlJson.decodeReply(body(channel.readOutbound())).message())
        .contains("wrong cluster secret");
    channel.finishAndReleaseAll();

    EmbeddedChannel other = gate(Optional.of(SECRET));
    ClusterSecret wrong = ClusterSecret.of("another-secret-entirely".getBytes());
    byte[] proof = wrong.prove(ControlGate.PURPOSE, nonce(other), CLOSE);
    other.writeInbound(Unpooled.wrappedBuffer(ControlGate.proofFrame(proof)));
    other.writeInbound(Unpooled.wrappedBuffer(CLOSE));
    assertThat(other.inboundMessages()).isEmpty();
    other.finishAndReleaseAll();
  }

  @Test
  void withoutASecretCommandsPassAndProofsAreDropped() {
    EmbeddedChannel channel = gate(Optional.empty());
    JsonNode challenge = ClusterJson.read(body(channel.readOutbound()));
    assertThat(challenge.path("proofRequired").asBoolean(true)).isFalse();
    channel.writeInbound(Unpooled.wrappedBuffer(ControlGate.proofFrame(new byte[32])));
    channel.writeInbound(Unpooled.wrappedBuffer(CLOSE));
    assertThat(body(channel.readInbound())).isEqualTo(CLOSE);
    assertThat(channel.inboundMessages()).isEmpty();
    // One at a time there too: the next passes only after the reply (and its fresh challenge).
    channel.writeOutbound(Unpooled.wrappedBuffer(ControlJson.encode(ControlReply.ok())));
    body(channel.readOutbound());
    assertThat(ClusterJson.read(body(channel.readOutbound())).has("challenge")).isTrue();
    channel.writeInbound(Unpooled.wrappedBuffer(CLOSE));
    assertThat(body(channel.readInbound())).isEqualTo(CLOSE);
    channel.writeInbound(Unpooled.wrappedBuffer(CLOSE));
    assertThat(channel.inboundMessages()).isEmpty();
    assertThat(channel.isOpen()).isFalse();
    channel.finishAndReleaseAll();
  }
}
