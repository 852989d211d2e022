package io.kvs.master.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.ControlClient;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ServerProbeTest {
  @Test
  void aSilentServerDoesNotHoldUpTheCaller() throws Exception {
    List<Socket> accepted = new ArrayList<>();
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        ControlClient control = new ControlClient(Duration.ofSeconds(5));
        ServerProbe probe =
            new ServerProbe(control, Duration.ofSeconds(1), Duration.ofSeconds(30))) {
      // Accepts connections (as a paused process's kernel does) and never answers.
      Thread acceptor =
          new Thread(
              () -> {
                try {
                  while (true) {
                    accepted.add(silent.accept());
                  }
                } catch (java.io.IOException e) {
                  // closed: the test is over
                }
              });
      acceptor.setDaemon(true);
      acceptor.start();
      int refusingPort = freedPort();
      ServerInfo paused = new ServerInfo("s1", "127.0.0.1", 1, 0, "", silent.getLocalPort());
      ServerInfo gone = new ServerInfo("s2", "127.0.0.1", 1, 0, "", refusingPort);

      long start = System.nanoTime();
      Map<String, ServerProbe.Probe> probes =
          probe.probeAll(List.of(paused, gone), Duration.ofMillis(300));
      long tookMillis = (System.nanoTime() - start) / 1_000_000;

      assertThat(tookMillis).as("bounded by the wait, not the call timeout").isLessThan(900);
      assertThat(probes.get("s1").answered()).isFalse();
      assertThat(probes.get("s1").error()).contains("no answer within 300 ms");
      // The refused connection fails fast and its failure is the probe's answer.
      ServerProbe.Probe refused = probe.probeAll(List.of(gone), Duration.ofSeconds(5)).get("s2");
      assertThat(refused.answered()).isFalse();
      assertThat(refused.error()).isNotEmpty().doesNotContain("no answer within");

      // The silent server's call ends at its own bound (1 s), then reports why.
      ServerProbe.Probe timedOut = probe.probeAll(List.of(paused), Duration.ofSeconds(3)).get("s1");
      assertThat(timedOut.answered()).isFalse();
      assertThat(timedOut.error()).contains("timed out");
    } finally {
      for (Socket socket : accepted) {
        socket.close();
      }
    }
  }

  /** A port nothing listens on any more (it was free a moment ago). */
  private static int freedPort() throws java.io.IOException {
    try (ServerSocket socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
