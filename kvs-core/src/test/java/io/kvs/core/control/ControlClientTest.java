package io.kvs.core.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.security.ClusterSecret;
import io.kvs.core.security.RefusalLog;
import io.kvs.core.security.SecurityOptions;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The control client keeps its connections: commands one after another share one, commands at once
 * each get their own (kept afterwards), a connection the server closed is dropped and the next
 * command connects afresh, and one whose command timed out is not used again. The server end is the
 * real gate and framing with a handler that answers each command (list: at once; close: once
 * released).
 */
class ControlClientTest {
  private static final Duration BOUND = Duration.ofSeconds(5);
  private static final ClusterSecret SECRET =
      ClusterSecret.of("control-client-test-secret".getBytes(StandardCharsets.UTF_8));

  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final ChannelGroup accepted = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
  private final AtomicInteger connections = new AtomicInteger();
  private final AtomicInteger commands = new AtomicInteger();
  private volatile CountDownLatch release = new CountDownLatch(0);
  private volatile CountDownLatch arrived = new CountDownLatch(0);

  @AfterEach
  void stop() {
    accepted.close().awaitUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** A control port answering every command OK; {@code close} commands wait for the release. */
  private int serve(Optional<ClusterSecret> secret) {
    RefusalLog refusals = new RefusalLog(LoggerFactory.getLogger(getClass()), "test connection");
    Channel server =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel child) {
                    connections.incrementAndGet();
                    accepted.add(child);
                    ControlFraming.addServerHandlers(
                        child.pipeline(), new ControlGate(secret, refusals));
                    child.pipeline().addLast(new Answering());
                  }
                })
            .bind("127.0.0.1", 0)
            .syncUninterruptibly()
            .channel();
    accepted.add(server);
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  private final class Answering extends SimpleChannelInboundHandler<ControlCommand> {
    @Override
    protected void channelRead0(ChannelHandlerContext context, ControlCommand command) {
      commands.incrementAndGet();
      arrived.countDown();
      if (command instanceof ControlCommand.Close) {
        CountDownLatch latch = release;
        new Thread(
                () -> {
                  try {
                    latch.await();
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  context.writeAndFlush(ControlReply.ok());
                })
            .start();
      } else {
        context.writeAndFlush(ControlReply.ok());
      }
    }
  }

  @Test
  void commandsOneAfterAnotherShareOneConnectionEachProvedAnew() {
    int port = serve(Optional.of(SECRET));
    try (ControlClient control = new ControlClient(BOUND, SecurityOptions.withSecret(SECRET))) {
      for (int i = 0; i < 5; i++) {
        assertThat(control.call("127.0.0.1", port, new ControlCommand.ListRegions()).isOk())
            .isTrue();
      }
    }
    assertThat(commands.get()).isEqualTo(5);
    assertThat(connections.get()).isEqualTo(1);
  }

  @Test
  void commandsAtOnceEachGetAConnectionAndKeepItForTheNext() throws Exception {
    int port = serve(Optional.empty());
    release = new CountDownLatch(1);
    arrived = new CountDownLatch(3);
    try (ControlClient control = new ControlClient(BOUND)) {
      List<CompletableFuture<ControlReply>> waiting = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        waiting.add(control.callAsync("127.0.0.1", port, new ControlCommand.Close(i, 1), BOUND));
      }
      awaitCommands(3);
      release.countDown();
      for (CompletableFuture<ControlReply> reply : waiting) {
        assertThat(reply.get(BOUND.toMillis(), TimeUnit.MILLISECONDS).isOk()).isTrue();
      }
      assertThat(connections.get()).isEqualTo(3);
      for (int i = 0; i < 6; i++) {
        assertThat(control.call("127.0.0.1", port, new ControlCommand.ListRegions()).isOk())
            .isTrue();
      }
      assertThat(connections.get()).isEqualTo(3);
    }
  }

  @Test
  void aConnectionTheServerClosedIsDroppedAndTheNextCommandConnectsAfresh() throws Exception {
    int port = serve(Optional.empty());
    try (ControlClient control = new ControlClient(BOUND)) {
      assertThat(control.call("127.0.0.1", port, new ControlCommand.ListRegions()).isOk()).isTrue();
      CountDownLatch closed = new CountDownLatch(1);
      for (Channel channel : accepted) {
        if (channel instanceof SocketChannel) {
          channel.close().addListener(f -> closed.countDown());
        }
      }
      assertThat(closed.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
      // The client drops it once it sees the close (a command sent on it before that fails, as
      // one to a server that stopped would: the server may have read it).
      long deadline = System.nanoTime() + BOUND.toNanos();
      while (control.idleConnections() > 0 && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      assertThat(control.idleConnections()).isZero();
      assertThat(control.call("127.0.0.1", port, new ControlCommand.ListRegions()).isOk()).isTrue();
      assertThat(connections.get()).isEqualTo(2);
    }
  }

  @Test
  void aConnectionWhoseCommandTimedOutIsNotUsedAgain() {
    int port = serve(Optional.empty());
    release = new CountDownLatch(1); // the close hangs
    try (ControlClient control = new ControlClient(BOUND)) {
      assertThatThrownBy(
              () ->
                  control.call(
                      "127.0.0.1", port, new ControlCommand.Close(1, 1), Duration.ofMillis(200)))
          .isInstanceOf(KvsException.class)
          .satisfies(e -> assertThat(((KvsException) e).status()).isEqualTo(StatusCode.IO_ERROR))
          .hasMessageContaining("timed out");
      release.countDown(); // its late reply goes to a closed connection
      assertThat(control.call("127.0.0.1", port, new ControlCommand.ListRegions()).isOk()).isTrue();
      assertThat(connections.get()).isEqualTo(2);
    }
  }

  @Test
  void aClientWithoutTheSecretIsToldSoOnAKeptConnectionToo() {
    int port = serve(Optional.empty());
    try (ControlClient control = new ControlClient(BOUND, SecurityOptions.withSecret(SECRET))) {
      assertThatThrownBy(() -> control.call("127.0.0.1", port, new ControlCommand.ListRegions()))
          .isInstanceOf(KvsException.class)
          .hasMessageContaining("does not authenticate control commands");
    }
    assertThat(commands.get()).isZero();
  }

  private void awaitCommands(int count) throws InterruptedException {
    assertThat(arrived.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    assertThat(commands.get()).isEqualTo(count);
  }
}
