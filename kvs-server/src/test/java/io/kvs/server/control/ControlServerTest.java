package io.kvs.server.control;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.StatusCode;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.control.ControlClient;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlJson;
import io.kvs.core.control.ControlReply;
import io.kvs.core.control.HeldRegion;
import io.kvs.core.control.StreamKey;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The control server's lanes: reads are answered while an open hangs (the master's bound on {@code
 * list} holds), different regions' opens run side by side while one region's wait their turn, and
 * changes beyond a lane's bounded queue are answered OVERLOADED at once.
 */
class ControlServerTest {
  /** The master's bound on {@code list} (Reconciler.LIST_TIMEOUT). */
  private static final Duration LIST_BOUND = Duration.ofSeconds(1);

  private static final Duration LONG = Duration.ofSeconds(30);

  private static RegionDescriptor region(long id) {
    return new RegionDescriptor(
        id, new byte[0], new byte[0], "s1", List.of(), 1, RegionState.OPENING);
  }

  private static ControlCommand open(long id) {
    return new ControlCommand.Open(region(id), ReplicationMode.NONE, StreamKey.random());
  }

  @Test
  void readsAreAnsweredWhileAnOpenHangs() throws Exception {
    StubRegions regions = new StubRegions("s1").hangOpens();
    try (ControlServer server = ControlServer.start(regions, "127.0.0.1", 0);
        ControlClient control = new ControlClient(LONG)) {
      int port = server.port();
      CompletableFuture<ControlReply> opening = control.callAsync("127.0.0.1", port, open(1), LONG);
      assertThat(regions.awaitOpening(10)).isTrue();
      // The open holds its lane; reads have lanes of their own.
      ControlReply list =
          control.call("127.0.0.1", port, new ControlCommand.ListRegions(), LIST_BOUND);
      assertThat(list.isOk()).isTrue();
      assertThat(list.regions()).isEmpty();
      assertThat(control.call("127.0.0.1", port, new ControlCommand.Stats(), LIST_BOUND).isOk())
          .isTrue();
      assertThat(
              control.call("127.0.0.1", port, new ControlCommand.RegionStats(1), LIST_BOUND).isOk())
          .isTrue();
      assertThat(control.call("127.0.0.1", port, new ControlCommand.Digest(1), LIST_BOUND).isOk())
          .isTrue();
      assertThat(opening).isNotDone();
      regions.release();
      assertThat(opening.get(10, TimeUnit.SECONDS).isOk()).isTrue();
      assertThat(
              control
                  .call("127.0.0.1", port, new ControlCommand.ListRegions(), LIST_BOUND)
                  .regions())
          .extracting(HeldRegion::regionId)
          .containsExactly(1L);
    }
  }

  /**
   * A command of another control protocol version (a master of another release) is answered
   * INVALID_ARGUMENT naming both versions, and the connection closes; nothing runs.
   */
  @Test
  void aCommandOfAnotherVersionIsRefusedNamingBoth() throws Exception {
    StubRegions regions = new StubRegions("s1");
    try (ControlServer server = ControlServer.start(regions, "127.0.0.1", 0);
        Socket socket = new Socket("127.0.0.1", server.port())) {
      socket.setSoTimeout((int) LONG.toMillis());
      DataInputStream in = new DataInputStream(socket.getInputStream());
      assertThat(readFrame(in)).contains("challenge");
      byte[] command = "{\"version\":2,\"command\":\"list\"}".getBytes(StandardCharsets.UTF_8);
      OutputStream out = socket.getOutputStream();
      out.write(
          ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(command.length).array());
      out.write(command);
      out.flush();
      ControlReply reply = ControlJson.decodeReply(readFrame(in).getBytes(StandardCharsets.UTF_8));
      assertThat(reply.status()).isEqualTo(StatusCode.INVALID_ARGUMENT);
      assertThat(reply.message())
          .startsWith("malformed command: a command of control protocol version 2")
          .contains("speaks version 1");
      // Closed after the refusal (the next command's challenge may come first): the stream ends
      // within the socket's timeout, which would throw.
      while (in.read() != -1) {
        // the challenge's bytes
      }
    }
  }

  private static String readFrame(DataInputStream in) throws IOException {
    byte[] length = new byte[4];
    in.readFully(length);
    byte[] body = new byte[ByteBuffer.wrap(length).order(ByteOrder.LITTLE_ENDIAN).getInt()];
    in.readFully(body);
    return new String(body, StandardCharsets.UTF_8);
  }

  @Test
  void aBackupWithoutTheStreamAsksToRejoin() throws Exception {
    StubRegions regions =
        new StubRegions(
            "s1",
            region -> {
              if (region.id() == 2) {
                throw new NotInSyncException("region 2: restarted since");
              }
            });
    try (ControlServer server = ControlServer.start(regions, "127.0.0.1", 0);
        ControlClient control = new ControlClient(LONG)) {
      ControlReply refused = control.call("127.0.0.1", server.port(), open(2), LONG);
      assertThat(refused.status()).isEqualTo(StatusCode.INVALID_ARGUMENT);
      assertThat(refused.stats()).containsEntry(ControlReply.REJOIN, 1L);
      assertThat(refused.message()).contains("restarted since");
      ControlReply opened = control.call("127.0.0.1", server.port(), open(3), LONG);
      assertThat(opened.isOk()).isTrue();
      assertThat(opened.stats()).doesNotContainKey(ControlReply.REJOIN);
    }
  }

  @Test
  void changesBeyondTheQueueAreAnsweredOverloaded() throws Exception {
    StubRegions regions = new StubRegions("s1").hangOpens();
    try (ControlServer server = ControlServer.start(regions, "127.0.0.1", 0);
        ControlClient control = new ControlClient(LONG)) {
      int port = server.port();
      CompletableFuture<ControlReply> first = control.callAsync("127.0.0.1", port, open(1), LONG);
      assertThat(regions.awaitOpening(10)).isTrue();
      // One runs (hanging); its lane's queue takes CHANGES_WAITING_MAX of the regions that go to
      // that lane; the one after is refused.
      List<CompletableFuture<ControlReply>> waiting = new ArrayList<>();
      for (int i = 0; i < ControlServer.CHANGES_WAITING_MAX + 1; i++) {
        long sameLane = 1 + (long) ControlServer.CHANGE_LANES * (i + 1);
        waiting.add(control.callAsync("127.0.0.1", port, open(sameLane), LONG));
      }
      CompletableFuture.anyOf(waiting.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
      List<CompletableFuture<ControlReply>> answered =
          waiting.stream().filter(CompletableFuture::isDone).toList();
      assertThat(answered).hasSize(1);
      assertThat(answered.get(0).get().status()).isEqualTo(StatusCode.OVERLOADED);
      assertThat(server.overloaded()).isEqualTo(1);
      // Reads still pass while the changes' lane is full.
      assertThat(
              control.call("127.0.0.1", port, new ControlCommand.ListRegions(), LIST_BOUND).isOk())
          .isTrue();
      regions.release();
      assertThat(first.get(10, TimeUnit.SECONDS).isOk()).isTrue();
      for (CompletableFuture<ControlReply> reply : waiting) {
        if (reply != answered.get(0)) {
          assertThat(reply.get(10, TimeUnit.SECONDS).isOk()).isTrue();
        }
      }
    }
  }

  @Test
  void differentRegionsOpenSideBySideAndOneRegionsInTurn() throws Exception {
    Set<Long> begun = ConcurrentHashMap.newKeySet();
    CountDownLatch lanesBusy = new CountDownLatch(ControlServer.CHANGE_LANES);
    StubRegions regions =
        new StubRegions(
                "s1",
                region -> {
                  begun.add(region.id());
                  lanesBusy.countDown();
                })
            .hangOpens();
    try (ControlServer server = ControlServer.start(regions, "127.0.0.1", 0);
        ControlClient control = new ControlClient(LONG)) {
      int port = server.port();
      List<CompletableFuture<ControlReply>> opens = new ArrayList<>();
      for (long id = 1; id <= ControlServer.CHANGE_LANES; id++) {
        opens.add(control.callAsync("127.0.0.1", port, open(id), LONG));
      }
      // Region 1 again, at a later epoch: behind region 1's open, in its lane.
      RegionDescriptor later =
          new RegionDescriptor(
              1, new byte[0], new byte[0], "s1", List.of(), 2, RegionState.OPENING);
      CompletableFuture<ControlReply> again =
          control.callAsync(
              "127.0.0.1",
              port,
              new ControlCommand.Open(later, ReplicationMode.NONE, StreamKey.random()),
              LONG);
      assertThat(lanesBusy.await(10, TimeUnit.SECONDS)).as("every lane began an open").isTrue();
      assertThat(begun).hasSize(ControlServer.CHANGE_LANES); // each hangs; region 1's second waits
      assertThat(again).isNotDone();
      regions.release();
      for (CompletableFuture<ControlReply> open : opens) {
        assertThat(open.get(10, TimeUnit.SECONDS).isOk()).isTrue();
      }
      assertThat(again.get(10, TimeUnit.SECONDS).isOk()).isTrue();
    }
  }
}
