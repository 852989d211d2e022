package io.kvs.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.StatusCode;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.wire.BlockingFrames;
import io.kvs.core.wire.ClientHandshake;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import io.kvs.core.wire.WireCodec;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A failed write tells the application whether it may have taken effect: {@link
 * OutcomeUnknownException} once it may have reached a primary (never retried, since a retry could
 * apply it twice, after a later write), {@link NotAppliedException} when it surely did not.
 */
class KvsClientWriteOutcomeTest extends ClusterTestBase {
  private static final Duration TIMEOUT = Duration.ofMillis(800);

  /** A primary that takes connections and requests but never answers. */
  @Test
  void aWriteSentWithoutAReplyHasAnUnknownOutcomeAndIsNotRetried() throws Exception {
    startCluster(Transport.TCP);
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      // "zebra" is in region 4: its primary is now the silent server.
      AtomicInteger bytesRead = silentPrimaryOfRegion4(silent);
      KvsClient client = cluster.client(Transport.TCP, TIMEOUT);

      assertThatThrownBy(() -> client.put(bytes("zebra"), bytes("v")))
          .isInstanceOfSatisfying(
              OutcomeUnknownException.class,
              e -> {
                assertThat(e.regionId()).isEqualTo(4);
                assertThat(e.status()).isEqualTo(StatusCode.IO_ERROR);
              })
          .hasMessageContaining("put: sent to server s9 for region 4")
          .hasMessageContaining("may or may not have been applied");
      assertThat(bytesRead.get()).as("the put reached the server").isPositive();
      assertThatThrownBy(() -> client.delete(bytes("zebra")))
          .isInstanceOf(OutcomeUnknownException.class);
      // A read changes nothing: it is retried until the operation timeout.
      assertThatThrownBy(() -> client.get(bytes("zebra")))
          .isInstanceOf(RegionUnavailableException.class)
          .hasMessageContaining("get: region 4 not available");
      // Other regions are served meanwhile.
      client.put(bytes("apple"), bytes("v"));
      assertThat(client.get(bytes("apple")).map(ClusterTestBase::text)).hasValue("v");
    }
  }

  /**
   * A primary that stopped answering (paused, cut off) while the map moved its region on: a read
   * waiting for it goes to the new primary at once, a write ends with its outcome unknown; neither
   * waits out the operation timeout.
   */
  @Test
  void requestsWaitingForASilentPrimaryStopWaitingWhenTheMapMovesTheRegion() throws Exception {
    startCluster(Transport.TCP);
    Duration longTimeout = Duration.ofSeconds(30);
    KvsClient client = cluster.client(Transport.TCP, longTimeout);
    client.put(bytes("zebra"), bytes("on s2"));
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      AtomicInteger bytesRead = silentPrimaryOfRegion4(silent);
      awaitCondition(
          "the client routes region 4 to s9",
          longTimeout,
          () -> client.regionMap().byId(4).map(r -> r.primary().equals("s9")).orElse(false));

      CompletableFuture<Optional<byte[]>> read = client.getAsync(bytes("zebra"));
      awaitCondition("the get reached s9", longTimeout, () -> bytesRead.get() > 0);
      cluster.server("s2").attach(4, 3);
      cluster.write(TestCluster.descriptor(4, "s2", 3, RegionState.OPEN));
      assertThat(
              read.get(longTimeout.toMillis() / 3, TimeUnit.MILLISECONDS)
                  .map(ClusterTestBase::text))
          .hasValue("on s2");

      cluster.write(TestCluster.descriptor(4, "s9", 4, RegionState.OPEN));
      awaitCondition(
          "the client routes region 4 to s9 again",
          longTimeout,
          () -> client.regionMap().byId(4).map(r -> r.primary().equals("s9")).orElse(false));
      int before = bytesRead.get();
      CompletableFuture<Void> write = client.putAsync(bytes("zebra"), bytes("lost?"));
      awaitCondition("the put reached s9", longTimeout, () -> bytesRead.get() > before);
      cluster.server("s2").attach(4, 5);
      cluster.write(TestCluster.descriptor(4, "s2", 5, RegionState.OPEN));
      assertThatThrownBy(() -> write.get(longTimeout.toMillis() / 3, TimeUnit.MILLISECONDS))
          .hasCauseInstanceOf(OutcomeUnknownException.class)
          .hasMessageContaining(
              "region 4 moved from server s9 to server s2 while s9 had not answered")
          .hasMessageContaining("may or may not have been applied");
      assertThat(client.get(bytes("zebra")).map(ClusterTestBase::text)).hasValue("on s2");
    }
  }

  /** A write that reached no primary is surely not applied. */
  @Test
  void aWriteThatReachedNoPrimaryIsNotApplied() throws Exception {
    startCluster(Transport.TCP);
    // Region 4's primary is no live server any more, before the client starts: a client that
    // learned of it only while the put was on its way could still reach the server, which serves.
    cluster.unregister("s2");
    KvsClient client = cluster.client(Transport.TCP, TIMEOUT);
    assertThatThrownBy(() -> client.put(bytes("zebra"), bytes("v")))
        .isInstanceOf(RegionUnavailableException.class)
        .isInstanceOf(NotAppliedException.class)
        .hasMessageContaining("its primary s2 is not a live server");
  }

  /**
   * A primary that refuses every write (NOT_ENOUGH_REPLICAS), each after 80 ms: the client retries
   * until its timeout, and the write fails as not applied, never with its outcome unknown -- a
   * retry sent with less time left than the refusal takes would time out before the answer came.
   */
  @Test
  void aWriteEveryAnswerRefusedIsNotAppliedHoweverLateTheRetry() throws Exception {
    startCluster(Transport.TCP);
    Duration timeout = Duration.ofMillis(600);
    try (ServerSocket refusing = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      AtomicInteger refusals = new AtomicInteger();
      Thread acceptor =
          new Thread(() -> refuse(refusing, Duration.ofMillis(80), refusals), "refusing-server");
      acceptor.setDaemon(true);
      acceptor.start();
      cluster.register(new ServerInfo("s9", "127.0.0.1", refusing.getLocalPort(), 0, "", 0));
      cluster.write(TestCluster.descriptor(4, "s9", 2, RegionState.OPEN));
      KvsClient client = cluster.client(Transport.TCP, timeout);
      awaitCondition(
          "the client routes region 4 to s9",
          timeout.multipliedBy(50),
          () -> client.regionMap().byId(4).map(r -> r.primary().equals("s9")).orElse(false));

      // With the old rule (a retry sent whenever any time was left) about four in ten of these
      // ended unknown: a dozen all refused would not happen.
      for (int i = 0; i < 12; i++) {
        int before = refusals.get();
        assertThatThrownBy(() -> client.put(bytes("zebra"), bytes("v")))
            .isInstanceOf(RegionUnavailableException.class)
            .isInstanceOf(NotAppliedException.class)
            .hasMessageContaining("NOT_ENOUGH_REPLICAS from server s9");
        assertThat(refusals.get() - before).as("attempts refused").isGreaterThan(1);
      }
    }
  }

  /**
   * Admits every connection on {@code server} and answers each request with NOT_ENOUGH_REPLICAS
   * after {@code delay}, counting them in {@code refusals}.
   */
  private static void refuse(ServerSocket server, Duration delay, AtomicInteger refusals) {
    while (!server.isClosed()) {
      try (Socket socket = server.accept()) {
        InputStream in = admit(socket);
        while (true) {
          Request request = WireCodec.decodeRequest(BlockingFrames.read(in));
          Thread.sleep(delay.toMillis()); // the refusal's latency (what the test is about)
          BlockingFrames.write(
              socket.getOutputStream(),
              WireCodec.encode(
                  Reply.error(
                      request.opcode(),
                      StatusCode.NOT_ENOUGH_REPLICAS,
                      request.requestId(),
                      "1 replica in sync, fewer than its minimum of 2; nothing was written")));
          refusals.incrementAndGet();
        }
      } catch (IOException e) {
        // closed: the test is over, or the client dropped the connection
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /**
   * Serves {@code silent} as server s9 that never answers ({@link #swallow}) and makes it region
   * 4's primary at epoch 2; returns the count of bytes it read.
   */
  private AtomicInteger silentPrimaryOfRegion4(ServerSocket silent) throws Exception {
    AtomicInteger bytesRead = new AtomicInteger();
    Thread acceptor = new Thread(() -> swallow(silent, bytesRead), "silent-server");
    acceptor.setDaemon(true);
    acceptor.start();
    cluster.register(new ServerInfo("s9", "127.0.0.1", silent.getLocalPort(), 0, "", 0));
    cluster.write(TestCluster.descriptor(4, "s9", 2, RegionState.OPEN));
    return bytesRead;
  }

  /**
   * Admits every connection (the client TCP handshake, without a secret), then reads its bytes and
   * never answers, until the socket is closed.
   */
  private static void swallow(ServerSocket server, AtomicInteger bytesRead) {
    byte[] buffer = new byte[4096];
    while (!server.isClosed()) {
      try (Socket socket = server.accept()) {
        InputStream in = admit(socket);
        int read;
        while ((read = in.read(buffer)) > 0) {
          bytesRead.addAndGet(read);
        }
      } catch (IOException e) {
        // closed: the test is over, or the client dropped the connection
      }
    }
  }

  /** The client TCP handshake, without a secret: returns the socket's input, past it. */
  private static InputStream admit(Socket socket) throws IOException {
    InputStream in = socket.getInputStream();
    ClientHandshake.Challenge challenge = ClientHandshake.challenge(Optional.empty());
    BlockingFrames.write(socket.getOutputStream(), ClientHandshake.encode(challenge));
    ClientHandshake.Hello hello = ClientHandshake.decodeHello(BlockingFrames.read(in));
    BlockingFrames.write(
        socket.getOutputStream(),
        ClientHandshake.encode(ClientHandshake.admit(challenge, hello, Optional.empty())));
    return in;
  }
}
