package io.kvs.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.KvsException;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.wire.BlockingFrames;
import io.kvs.core.wire.ClientHandshake;
import io.kvs.core.wire.Opcode;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import io.kvs.core.wire.WireCodec;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link DirectConnection} against a scripted server on a real socket: the server answers each get
 * with the key as its value, holding back and reversing replies so that they arrive out of order;
 * keys starting "silent" get no reply, "die" closes the connection, "huge" gets a frame length
 * beyond the protocol's bound, "batch" is answered only once {@link #BATCH} such requests came.
 */
class DirectConnectionTest {
  private static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);
  private static final int BATCH = 3 * DirectConnection.DEFER_WRITES_OUTSTANDING;

  private final ExecutorService pool = Executors.newCachedThreadPool();
  private final AtomicInteger readerTasks = new AtomicInteger();
  private final CountDownLatch closedByServer = new CountDownLatch(1);
  private ServerSocket listener;
  private volatile int serverBufferBytes;

  @AfterEach
  void stop() throws IOException {
    pool.shutdownNow();
    if (listener != null) {
      listener.close();
    }
  }

  @Test
  void aLoneBlockingCallerReadsItsOwnRepliesAndWakesNoOtherThread() throws Exception {
    Connection connection = connect();
    for (int i = 0; i < 200; i++) {
      CompletableFuture<Reply> reply = connection.send(get("k" + i), TIMEOUT_NANOS, true);
      DirectConnection.awaitSent(reply);
      assertThat(reply).isDone();
      assertThat(text(reply.join().value())).isEqualTo("k" + i);
    }
    assertThat(readerTasks).hasValue(0);
  }

  @Test
  void concurrentBlockingAndAsynchronousCallersEachGetTheirOwnReply() throws Exception {
    Connection connection = connect();
    onThreads(
        8,
        thread -> {
          for (int i = 0; i < 300; i++) {
            String key = "t" + thread + "-" + i;
            boolean blocking = (thread + i) % 3 != 0;
            CompletableFuture<Reply> reply = connection.send(get(key), TIMEOUT_NANOS, blocking);
            if (blocking) {
              DirectConnection.awaitSent(reply);
            }
            assertThat(text(reply.get(10, TimeUnit.SECONDS).value())).isEqualTo(key);
          }
        });
  }

  @Test
  void framesLargerThanTheConnectionsBuffersGoAndComeWhole() throws Exception {
    Connection connection = connect();
    Random random = new Random(7);
    onThreads(
        4,
        thread -> {
          for (int i = 0; i < 20; i++) {
            int size = (thread * 20 + i) % 3 == 0 ? 1 << 20 : 300_000 + i;
            byte[] value = new byte[size];
            synchronized (random) {
              random.nextBytes(value);
            }
            // The server echoes a put's value: a request and a reply larger than the
            // 256 KiB output and 64 KiB input buffers, among small ones.
            CompletableFuture<Reply> echoed =
                connection.send(
                    Request.put(0, 1, 1, "k".getBytes(StandardCharsets.UTF_8), value),
                    TIMEOUT_NANOS,
                    i % 2 == 0);
            if (i % 2 == 0) {
              DirectConnection.awaitSent(echoed);
            }
            assertThat(echoed.get(10, TimeUnit.SECONDS).value()).isEqualTo(value);
            CompletableFuture<Reply> small = connection.send(get("s" + i), TIMEOUT_NANOS, false);
            assertThat(text(small.get(10, TimeUnit.SECONDS).value())).isEqualTo("s" + i);
          }
        });
  }

  @Test
  void framesLeftToTheReaderUnderLoadAllGoOut() throws Exception {
    Connection connection = connect();
    for (int round = 0; round < 20; round++) {
      // The server answers none until all have come: a frame left queued would hang the round.
      List<CompletableFuture<Reply>> replies = new ArrayList<>();
      for (int i = 0; i < BATCH; i++) {
        replies.add(connection.send(get("batch" + round + "-" + i), TIMEOUT_NANOS, false));
      }
      for (int i = 0; i < BATCH; i++) {
        assertThat(text(replies.get(i).get(10, TimeUnit.SECONDS).value()))
            .isEqualTo("batch" + round + "-" + i);
      }
    }
  }

  @Test
  void aReaderWhoseWriteStallsKeepsReadingSoThatTheServerReadsOn() throws Exception {
    // Small server buffers; "flood" makes the server write 16 MiB of replies before it reads on.
    DirectConnection connection = (DirectConnection) connect(64 * 1024);
    List<CompletableFuture<Reply>> unanswered = new ArrayList<>();
    for (int i = 0; i < DirectConnection.DEFER_WRITES_OUTSTANDING; i++) {
      unanswered.add(connection.send(get("silent" + i), TIMEOUT_NANOS, false));
    }
    long deadline = System.nanoTime() + TIMEOUT_NANOS;
    while (!connection.readByAnotherThread()) { // the reader task takes the role
      assertThat(System.nanoTime()).isLessThan(deadline);
      Thread.onSpinWait();
    }
    // Under load with a reader: these are left to it, which writes 20 MiB while the server,
    // flooding, takes none until its replies are read.
    connection.send(get("flood"), TIMEOUT_NANOS, false);
    List<CompletableFuture<Reply>> echoed = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      byte[] value = new byte[1 << 20];
      value[i] = (byte) i;
      echoed.add(
          connection.send(
              Request.put(0, 1, 1, "k".getBytes(StandardCharsets.UTF_8), value),
              TIMEOUT_NANOS,
              false));
    }
    for (int i = 0; i < 20; i++) {
      assertThat(echoed.get(i).get(10, TimeUnit.SECONDS).value()[i]).isEqualTo((byte) i);
    }
    assertThat(unanswered).noneMatch(CompletableFuture::isDone);
    assertThat(connection.isOpen()).isTrue();
  }

  @Test
  void anUnansweredRequestTimesOutAndTheConnectionKeepsServing() throws Exception {
    Connection connection = connect();
    long started = System.nanoTime();
    CompletableFuture<Reply> silent =
        connection.send(get("silent"), TimeUnit.MILLISECONDS.toNanos(100), true);
    DirectConnection.awaitSent(silent);
    assertThatThrownBy(silent::join).hasCauseInstanceOf(TimeoutException.class);
    assertThat(System.nanoTime() - started).isLessThan(TimeUnit.SECONDS.toNanos(5));
    CompletableFuture<Reply> next = connection.send(get("after"), TIMEOUT_NANOS, false);
    assertThat(text(next.get(10, TimeUnit.SECONDS).value())).isEqualTo("after");
    assertThat(connection.isOpen()).isTrue();
  }

  @Test
  void anInterruptedCallerStillReadsItsReplyAndKeepsItsInterrupt() throws Exception {
    Connection connection = connect();
    Thread.currentThread().interrupt();
    try {
      CompletableFuture<Reply> reply = connection.send(get("k"), TIMEOUT_NANOS, true);
      DirectConnection.awaitSent(reply);
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
      assertThat(reply).isDone();
      assertThat(text(reply.join().value())).isEqualTo("k");
      assertThat(connection.isOpen()).isTrue();
    } finally {
      Thread.interrupted();
    }
  }

  @Test
  void aServerThatClosesFailsWhatItTookAndLaterRequestsAreUnsent() throws Exception {
    Connection connection = connect();
    CompletableFuture<Reply> taken = connection.send(get("die"), TIMEOUT_NANOS, true);
    DirectConnection.awaitSent(taken);
    assertThatThrownBy(taken::join)
        .cause()
        .isInstanceOf(KvsException.class)
        .isNotInstanceOf(UnsentRequestException.class);
    assertThat(connection.isOpen()).isFalse();
    CompletableFuture<Reply> later = connection.send(get("k"), TIMEOUT_NANOS, false);
    assertThatThrownBy(later::join).cause().isInstanceOf(UnsentRequestException.class);
  }

  @Test
  void aRequestAfterTheServerClosedAnIdleConnectionIsUnsent() throws Exception {
    Connection connection = connect();
    CompletableFuture<Reply> bye = connection.send(get("bye"), TIMEOUT_NANOS, true);
    DirectConnection.awaitSent(bye);
    assertThat(text(bye.join().value())).isEqualTo("bye");
    assertThat(closedByServer.await(10, TimeUnit.SECONDS)).isTrue();
    // Nobody read the idle connection's end of stream; the next send notices it before writing.
    CompletableFuture<Reply> next = connection.send(get("k"), TIMEOUT_NANOS, true);
    DirectConnection.awaitSent(next);
    assertThatThrownBy(next::join).cause().isInstanceOf(UnsentRequestException.class);
    assertThat(connection.isOpen()).isFalse();
  }

  @Test
  void aReplyFrameBeyondTheBoundFailsTheConnection() throws Exception {
    Connection connection = connect();
    CompletableFuture<Reply> reply = connection.send(get("huge"), TIMEOUT_NANOS, false);
    assertThatThrownBy(() -> reply.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOf(KvsException.class)
        .hasMessageContaining("reply frame of");
    assertThat(connection.isOpen()).isFalse();
  }

  @Test
  void aServerRequiringASecretThisClientLacksIsRefusedWithTheReason() throws Exception {
    listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    pool.submit(
        () -> {
          try (Socket socket = listener.accept()) {
            byte[] challenge =
                ClientHandshake.encode(
                    new ClientHandshake.Challenge(new byte[32], /* proofRequired= */ true));
            BlockingFrames.write(socket.getOutputStream(), challenge);
            socket.getInputStream().read(); // until the client hangs up
          }
          return null;
        });
    DirectConnectionFactory factory = new DirectConnectionFactory(pool, Optional.empty());
    assertThatThrownBy(() -> factory.connect(server()).get(10, TimeUnit.SECONDS))
        .cause()
        .isInstanceOf(KvsException.class)
        .hasMessageContaining("requires the client secret");
  }

  /** What one of {@link #onThreads}'s threads does. */
  private interface ThreadBody {
    void run(int thread) throws Exception;
  }

  /** Runs {@code body} on {@code count} threads at once; fails with the first thread's failure. */
  private void onThreads(int count, ThreadBody body) throws Exception {
    List<Future<?>> threads = new ArrayList<>();
    for (int t = 0; t < count; t++) {
      int thread = t;
      threads.add(
          pool.submit(
              () -> {
                body.run(thread);
                return null;
              }));
    }
    for (Future<?> thread : threads) {
      thread.get(60, TimeUnit.SECONDS);
    }
  }

  /** A connection to a fresh scripted server, whose reader tasks {@link #readerTasks} counts. */
  private Connection connect() throws Exception {
    return connect(0);
  }

  /** As {@link #connect()}, the server's socket buffers set to {@code bufferBytes} unless 0. */
  private Connection connect(int bufferBytes) throws Exception {
    listener = new ServerSocket();
    if (bufferBytes > 0) {
      listener.setReceiveBufferSize(bufferBytes); // inherited by accepted sockets
    }
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
    this.serverBufferBytes = bufferBytes;
    pool.submit(this::serve);
    Executor counting =
        task -> {
          readerTasks.incrementAndGet();
          pool.execute(task);
        };
    Connection connection =
        new DirectConnectionFactory(counting, Optional.empty())
            .connect(server())
            .get(10, TimeUnit.SECONDS);
    readerTasks.set(0); // the connect ran on the pool too
    return connection;
  }

  private ServerInfo server() {
    return new ServerInfo("s1", "127.0.0.1", listener.getLocalPort(), 0, "", 0, 0);
  }

  /** Accepts connections and answers them, each on a thread of its own. */
  private Void serve() throws IOException {
    while (!listener.isClosed()) {
      Socket socket = listener.accept();
      pool.submit(() -> answer(socket));
    }
    return null;
  }

  private Void answer(Socket socket) throws IOException {
    try (socket) {
      socket.setTcpNoDelay(true); // a frame is two writes: no 40 ms wait for a delayed ACK
      if (serverBufferBytes > 0) {
        socket.setSendBufferSize(serverBufferBytes);
      }
      InputStream in = socket.getInputStream();
      OutputStream out = socket.getOutputStream();
      ClientHandshake.Challenge challenge = ClientHandshake.challenge(Optional.empty());
      BlockingFrames.write(out, ClientHandshake.encode(challenge));
      ClientHandshake.Hello hello = ClientHandshake.decodeHello(BlockingFrames.read(in));
      BlockingFrames.write(
          out, ClientHandshake.encode(ClientHandshake.admit(challenge, hello, Optional.empty())));
      List<Reply> held = new ArrayList<>();
      List<Reply> batch = new ArrayList<>();
      while (true) {
        Request request = WireCodec.decodeRequest(BlockingFrames.read(in));
        String key = text(request.key());
        if (key.startsWith("silent")) {
          continue;
        }
        if (key.startsWith("flood")) {
          for (int i = 0; i < 16; i++) { // replies to no request: the client drops them
            BlockingFrames.write(out, WireCodec.encode(Reply.value(0, new byte[1 << 20])));
          }
          continue;
        }
        if (key.startsWith("die")) {
          return null;
        }
        if (key.startsWith("bye")) {
          BlockingFrames.write(
              out, WireCodec.encode(Reply.value(request.requestId(), request.key())));
          socket.close();
          closedByServer.countDown();
          return null;
        }
        if (key.startsWith("huge")) {
          out.write(
              ByteBuffer.allocate(4)
                  .order(ByteOrder.LITTLE_ENDIAN)
                  .putInt(WireCodec.MESSAGE_BYTES_MAX + 1)
                  .array());
          out.flush();
          continue;
        }
        if (key.startsWith("batch")) {
          batch.add(Reply.value(request.requestId(), request.key()));
          if (batch.size() == BATCH) {
            Collections.reverse(batch);
            for (Reply reply : batch) {
              BlockingFrames.write(out, WireCodec.encode(reply));
            }
            batch.clear();
          }
          continue;
        }
        held.add(
            Reply.value(
                request.requestId(),
                request.opcode() == Opcode.PUT ? request.value() : request.key()));
        // Answer in reverse order once two are held or nothing more is waiting to be read.
        if (held.size() >= 2 || in.available() == 0) {
          Collections.reverse(held);
          for (Reply reply : held) {
            BlockingFrames.write(out, WireCodec.encode(reply));
          }
          held.clear();
        }
      }
    } catch (IOException e) {
      return null; // the client hung up
    }
  }

  private static Request get(String key) {
    return Request.get(0, 1, 1, key.getBytes(StandardCharsets.UTF_8));
  }

  private static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }
}
