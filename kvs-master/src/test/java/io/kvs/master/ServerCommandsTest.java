package io.kvs.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.ControlClient;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlReply;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A server's lane bounds the master's commands to it: past its waiting bound a command fails
 * OVERLOADED at once, one that waited longer than its own timeout is dropped unsent, and one its
 * sender cancelled while it waited is never sent.
 */
class ServerCommandsTest {
  private static final Duration BOUND = Duration.ofMillis(500);

  @Test
  void aSilentServersLaneIsBounded() throws Exception {
    // Accepts connections (the kernel does) and never says a word: every command hangs to its
    // bound.
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        ControlClient control = new ControlClient(Duration.ofSeconds(10))) {
      ServerInfo server = new ServerInfo("s1", "127.0.0.1", 1, 0, "", silent.getLocalPort());
      ServerCommands commands = new ServerCommands(control, 1, 2);
      ControlCommand close = new ControlCommand.Close(1, 1);
      CompletableFuture<ControlReply> sent = commands.send(server, close, BOUND);
      // Its own bound is shorter than the wait for the one before it.
      CompletableFuture<ControlReply> waiting = commands.send(server, close, BOUND.dividedBy(5));
      CompletableFuture<ControlReply> cancelled = commands.send(server, close, BOUND);
      CompletableFuture<ControlReply> refused = commands.send(server, close, BOUND);
      assertThat(commands.pending()).isEqualTo(3);
      assertThat(refused).isCompletedExceptionally();
      assertThat(status(refused)).isEqualTo(StatusCode.OVERLOADED);
      cancelled.cancel(false);
      // The first times out; the one waiting behind it has waited longer than its bound by then, so
      // it is dropped rather than sent late; the cancelled one is skipped.
      assertThatThrownBy(() -> sent.get(10, TimeUnit.SECONDS)).hasMessageContaining("timed out");
      assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
          .hasMessageContaining("not sent: waited");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (commands.pending() > 0) {
        assertThat(System.nanoTime()).as("the lane empties").isLessThan(deadline);
        Thread.onSpinWait();
      }
    }
  }

  private static StatusCode status(CompletableFuture<ControlReply> reply) throws Exception {
    try {
      reply.get(1, TimeUnit.SECONDS);
      throw new AssertionError("completed normally");
    } catch (ExecutionException e) {
      return ((KvsException) e.getCause()).status();
    }
  }
}
