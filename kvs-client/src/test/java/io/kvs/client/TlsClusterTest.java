package io.kvs.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.KvsException;
import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.control.ControlClient;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlReply;
import io.kvs.core.security.ClusterSecret;
import io.kvs.core.security.SecurityOptions;
import io.kvs.core.security.ThrowawayCertificates;
import io.kvs.master.EmbeddedZooKeeper;
import io.kvs.master.Master;
import io.kvs.master.MasterOptions;
import io.kvs.server.RegionServer;
import io.kvs.server.ServerOptions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster with mutual TLS on the client port and the control RPC (certificates from a throwaway
 * CA): a client with a certificate from the CA is served; one without a certificate, or without
 * TLS, is refused with an error, while the good client is served on; a control command without a
 * certificate is refused.
 */
class TlsClusterTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  @TempDir Path directory;
  private EmbeddedZooKeeper zookeeper;
  private RegionServer server;
  private Master master;
  private ThrowawayCertificates certificates;

  @BeforeEach
  void startCluster() throws Exception {
    certificates = new ThrowawayCertificates(directory.resolve("tls"));
    certificates.createAuthority();
    ClusterSecret secret = ClusterSecret.of("tls-cluster-test-secret!".getBytes());
    zookeeper = EmbeddedZooKeeper.start(directory.resolve("zookeeper"), 0);
    server =
        RegionServer.start(
            ServerOptions.builder("s1", directory.resolve("s1"), zookeeper.connectString())
                .cluster("tls")
                .memoryBudgetBytes(64L << 20)
                .security(
                    SecurityOptions.withSecret(secret).withTls(certificates.options("s1", true)))
                .build());
    master =
        Master.start(
            new MasterOptions(
                    "m1",
                    zookeeper.connectString(),
                    "tls",
                    new ClusterConfig(2, 1, ReplicationMode.NONE, List.of()),
                    1,
                    Duration.ofMillis(200),
                    Duration.ofSeconds(10))
                .withSecurity(
                    SecurityOptions.withSecret(secret).withTls(certificates.options("m1", false))));
  }

  @AfterEach
  void stopCluster() throws Exception {
    if (master != null) {
      master.close();
    }
    if (server != null) {
      server.close();
    }
    zookeeper.close();
  }

  private KvsClientBuilder client() {
    return KvsClient.builder()
        .zookeeper(zookeeper.connectString())
        .cluster("tls")
        .operationTimeout(TIMEOUT);
  }

  @Test
  void aClientWithoutTheCertificateIsRefusedWhileAGoodOneIsServed() throws Exception {
    byte[] key = "key".getBytes(StandardCharsets.UTF_8);
    byte[] value = "value".getBytes(StandardCharsets.UTF_8);
    try (KvsClient good =
        client()
            .security(SecurityOptions.none().withTls(certificates.options("app", false)))
            .build()) {
      ClusterTestBase.awaitCondition(
          "every region open",
          Duration.ofSeconds(30),
          () ->
              good.regionMap().size() == 2
                  && good.regionMap().regions().stream()
                      .allMatch(r -> r.state() == RegionState.OPEN));
      good.put(key, value);

      try (KvsClient withoutCertificate = client().tlsTrust(certificates.authority()).build()) {
        assertThatThrownBy(() -> withoutCertificate.get(key)).isInstanceOf(KvsException.class);
      }
      try (KvsClient plain = client().build()) {
        assertThatThrownBy(() -> plain.get(key)).isInstanceOf(KvsException.class);
      }
      assertThat(good.get(key)).hasValueSatisfying(v -> assertThat(v).isEqualTo(value));
    }
  }

  @Test
  void aControlCommandWithoutACertificateIsRefused() {
    int port = server.info().controlPort();
    try (ControlClient stranger = new ControlClient(TIMEOUT)) {
      assertThatThrownBy(
              () -> stranger.call("127.0.0.1", port, new ControlCommand.Close(0, Long.MAX_VALUE)))
          .isInstanceOf(KvsException.class);
    }
    try (ControlClient admin =
        new ControlClient(
            TIMEOUT,
            SecurityOptions.withSecret(ClusterSecret.of("tls-cluster-test-secret!".getBytes()))
                .withTls(certificates.options("admin", false)))) {
      ControlReply list = admin.call("127.0.0.1", port, new ControlCommand.ListRegions());
      assertThat(list.isOk()).isTrue();
    }
  }
}
