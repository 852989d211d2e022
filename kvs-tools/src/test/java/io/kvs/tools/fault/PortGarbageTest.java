package io.kvs.tools.fault;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class PortGarbageTest {
  @Test
  void everyPatternReachesThePortAndSilentConnectionsStayOpenUntilClosed() throws Exception {
    AtomicLong received = new AtomicLong();
    List<Socket> accepted = new ArrayList<>();
    try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread acceptor =
          new Thread(
              () -> {
                while (!server.isClosed()) {
                  try {
                    Socket socket = server.accept();
                    synchronized (accepted) {
                      accepted.add(socket);
                    }
                    Thread reader = new Thread(() -> drain(socket, received));
                    reader.setDaemon(true);
                    reader.start();
                  } catch (IOException closed) {
                    return;
                  }
                }
              });
      acceptor.setDaemon(true);
      acceptor.start();
      PortGarbage.Target target =
          new PortGarbage.Target("test", "127.0.0.1", server.getLocalPort());
      PortGarbage garbage = PortGarbage.start(List.of(target), 7, 2);
      assertThat(garbage.awaitSent(30_000)).isTrue();
      PortGarbage.Report report = garbage.report();
      assertThat(report.silentHeld()).isEqualTo(2);
      assertThat(report.refused()).isZero();
      assertThat(report.connections()).isEqualTo(2 + PortGarbage.Pattern.values().length);
      assertThat(report.bytesSent()).isPositive();
      garbage.close();
      garbage.close(); // idempotent
    }
    synchronized (accepted) {
      assertThat(accepted).hasSize(2 + PortGarbage.Pattern.values().length);
    }
  }

  @Test
  void lengthPrefixesClaimMoreThanIsSent() {
    SplittableRandom random = new SplittableRandom(3);
    for (int i = 0; i < 100; i++) {
      byte[] oversized = PortGarbage.bytes(PortGarbage.Pattern.OVERSIZED_LENGTH, random);
      assertThat(oversized).hasSize(4 + 64);
      byte[] truncated = PortGarbage.bytes(PortGarbage.Pattern.TRUNCATED_FRAME, random);
      long big = java.nio.ByteBuffer.wrap(truncated, 0, 4).getInt() & 0xffffffffL;
      long little =
          java.nio.ByteBuffer.wrap(truncated, 0, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt()
              & 0xffffffffL;
      assertThat(Math.min(big, little)).isGreaterThan(truncated.length - 4);
    }
  }

  private static void drain(Socket socket, AtomicLong received) {
    try (InputStream in = socket.getInputStream()) {
      byte[] buffer = new byte[4096];
      int read;
      while ((read = in.read(buffer)) >= 0) {
        received.addAndGet(read);
      }
    } catch (IOException reset) {
      // a reset connection, one of the patterns
    }
  }
}
