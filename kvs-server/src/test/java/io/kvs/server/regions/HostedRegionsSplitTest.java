package io.kvs.server.regions;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.StatusCode;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.cluster.SplitOrigin;
import io.kvs.core.control.StreamKey;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import io.kvs.core.wire.WireCodec;
import io.kvs.engine.Engine;
import io.kvs.engine.EngineOptions;
import io.kvs.service.RegionService;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A split on one server as its clients see it: requests that reach the parent between its seal and
 * its daughters' opens wait for them, and requests still addressed to the parent afterwards (a
 * client whose map has not seen the split) are served by the daughter that holds their key.
 */
class HostedRegionsSplitTest {
  @TempDir Path directory;

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static Reply call(RegionService service, Request request) {
    byte[] encoded = WireCodec.encode(request);
    ByteBuffer buffer = ByteBuffer.allocateDirect(encoded.length).put(encoded).flip();
    return WireCodec.decodeReply(service.handle(buffer, 0, encoded.length));
  }

  private static RegionDescriptor daughter(long id, String start, String end, long sibling) {
    return new RegionDescriptor(
        id,
        bytes(start),
        bytes(end),
        "s1",
        List.of(),
        List.of(),
        2,
        RegionState.OPENING,
        new SplitOrigin(1, sibling));
  }

  @Test
  void requestsForTheParentWaitForItsDaughtersAndAreServedByThem() throws Exception {
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create(engine)) {
      HostedRegions regions =
          new HostedRegions("s1", engine, service, directory, id -> null, () -> 0);
      regions.open(
          new RegionDescriptor(
              1, new byte[0], new byte[0], "s1", List.of(), 1, RegionState.OPENING),
          ReplicationMode.NONE,
          1,
          StreamKey.random());
      assertThat(call(service, Request.put(1, 1, 1, bytes("a"), bytes("before"))).status())
          .isEqualTo(StatusCode.OK);

      regions.seal(1, 1, bytes("m"), false);
      // Sent after the seal: held until the daughters open if it arrives before them (never
      // refused), served by its daughter either way.
      CompletableFuture<Reply> held =
          CompletableFuture.supplyAsync(
              () -> call(service, Request.put(2, 1, 1, bytes("x"), bytes("during"))));
      regions.open(daughter(2, "", "m", 3), ReplicationMode.NONE, 1, StreamKey.random());
      regions.open(daughter(3, "m", "", 2), ReplicationMode.NONE, 1, StreamKey.random());
      assertThat(held.get(10, TimeUnit.SECONDS).status()).isEqualTo(StatusCode.OK);

      // The parent's map, after the split: each key served by its daughter.
      assertThat(call(service, Request.put(3, 1, 1, bytes("c"), bytes("after"))).status())
          .isEqualTo(StatusCode.OK);
      assertThat(call(service, Request.get(4, 2, 2, bytes("c"))).value()).isEqualTo(bytes("after"));
      assertThat(call(service, Request.get(5, 2, 2, bytes("a"))).value())
          .isEqualTo(bytes("before"));
      assertThat(call(service, Request.get(6, 3, 2, bytes("x"))).value())
          .isEqualTo(bytes("during"));
      assertThat(call(service, Request.get(7, 1, 1, bytes("x"))).value())
          .isEqualTo(bytes("during"));
      // A scan of the parent is refused: its client must learn where each daughter ends.
      assertThat(call(service, Request.scan(8, 1, 1, bytes("a"), null, 10, 1 << 20)).status())
          .isEqualTo(StatusCode.WRONG_REGION);
    }
  }
}
