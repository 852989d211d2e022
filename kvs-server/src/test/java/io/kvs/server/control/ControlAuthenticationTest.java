package io.kvs.server.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.control.ControlClient;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlJson;
import io.kvs.core.control.ControlReply;
import io.kvs.core.control.HeldRegion;
import io.kvs.core.security.ClusterSecret;
import io.kvs.core.security.SecurityOptions;
import io.kvs.fabric.FabricClient;
import io.kvs.fabric.FabricOptions;
import io.kvs.master.EmbeddedZooKeeper;
import io.kvs.master.Master;
import io.kvs.master.MasterOptions;
import io.kvs.server.RegionServer;
import io.kvs.server.ServerOptions;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster whose processes hold the cluster secret, and whose servers a client secret, refuses
 * control commands from anyone without the cluster secret and fabric clients without the client
 * secret, with a clear error and nothing changed: the region a stranger tries to close stays open
 * at its epoch (the attack of issue 17). The two credentials are separate: an application's client
 * secret commands nothing.
 */
class ControlAuthenticationTest {
  private static final ClusterSecret SECRET =
      ClusterSecret.of("control-authentication-test-secret".getBytes(StandardCharsets.UTF_8));
  private static final ClusterSecret CLIENT_SECRET =
      ClusterSecret.of("control-authentication-client-secret".getBytes(StandardCharsets.UTF_8));
  private static final SecurityOptions SECURITY =
      SecurityOptions.withSecret(SECRET).withClientSecret(CLIENT_SECRET);
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  @TempDir Path directory;
  private EmbeddedZooKeeper zookeeper;
  private CuratorFramework curator;
  private final ClusterPaths paths = new ClusterPaths("secured");
  private final List<RegionServer> servers = new ArrayList<>();
  private Master master;

  @BeforeEach
  void startCluster() throws Exception {
    zookeeper = EmbeddedZooKeeper.start(directory.resolve("zookeeper"), 0);
    curator = CuratorFrameworkFactory.newClient(zookeeper.connectString(), new RetryOneTime(100));
    curator.start();
    for (String id : List.of("s1", "s2")) {
      servers.add(
          RegionServer.start(
              ServerOptions.builder(id, directory.resolve(id), zookeeper.connectString())
                  .cluster("secured")
                  .fabricProvider("tcp")
                  .memoryBudgetBytes(64L << 20)
                  .security(SECURITY)
                  .build()));
    }
    master =
        Master.start(
            new MasterOptions(
                    "m1",
                    zookeeper.connectString(),
                    "secured",
                    new ClusterConfig(2, 2, ReplicationMode.SEND_INDEX, List.of()),
                    2,
                    Duration.ofMillis(200),
                    TIMEOUT)
                .withSecurity(SECURITY));
  }

  @AfterEach
  void stopCluster() throws Exception {
    if (master != null) {
      master.close();
    }
    for (RegionServer server : servers) {
      server.close();
    }
    curator.close();
    zookeeper.close();
  }

  @Test
  void aStrangersRawCloseFrameIsRefusedAndTheRegionStaysOpen() throws Exception {
    RegionDescriptor region = awaitOpen();
    RegionServer primary = server(region.primary());
    byte[] attack =
        ("{\"command\":\"close\",\"regionId\":"
                + region.id()
                + ",\"epoch\":"
                + (region.epoch() + 1)
                + "}")
            .getBytes(StandardCharsets.UTF_8);
    String reply;
    try (Socket socket = new Socket("127.0.0.1", primary.info().controlPort())) {
      socket.setSoTimeout((int) TIMEOUT.toMillis());
      writeFrame(socket.getOutputStream(), attack); // without even reading the challenge
      String challenge = readFrame(socket.getInputStream());
      assertThat(challenge).contains("\"proofRequired\":true");
      reply = readFrame(socket.getInputStream());
      assertThat(socket.getInputStream().read()).as("closed after the refusal").isEqualTo(-1);
    }
    ControlReply refusal = ControlJson.decodeReply(reply.getBytes(StandardCharsets.UTF_8));
    assertThat(refusal.status()).isEqualTo(StatusCode.INVALID_ARGUMENT);
    assertThat(refusal.message()).startsWith("unauthenticated:").contains("cluster secret");
    assertStillOpen(region, primary);
    assertThat(primary.control().refusals()).isEqualTo(1);
  }

  @Test
  void aWrongSecretIsRefusedAndNothingChanges() throws Exception {
    RegionDescriptor region = awaitOpen();
    RegionServer primary = server(region.primary());
    SecurityOptions wrong =
        SecurityOptions.withSecret(ClusterSecret.of("not-the-cluster-secret!".getBytes()));
    try (ControlClient control = new ControlClient(TIMEOUT, wrong)) {
      ControlReply reply =
          control.call(
              "127.0.0.1",
              primary.info().controlPort(),
              new ControlCommand.Close(region.id(), region.epoch() + 1));
      assertThat(reply.status()).isEqualTo(StatusCode.INVALID_ARGUMENT);
      assertThat(reply.message()).contains("wrong cluster secret");
    }
    assertStillOpen(region, primary);
  }

  @Test
  void aClientWithoutTheSecretIsToldWhatItLacks() throws Exception {
    RegionDescriptor region = awaitOpen();
    RegionServer primary = server(region.primary());
    try (ControlClient control = new ControlClient(TIMEOUT)) {
      assertThatThrownBy(
              () ->
                  control.call(
                      "127.0.0.1",
                      primary.info().controlPort(),
                      new ControlCommand.Close(region.id(), region.epoch() + 1)))
          .isInstanceOf(KvsException.class)
          .hasMessageContaining("requires the cluster secret");
    }
    assertStillOpen(region, primary);
  }

  @Test
  void aFabricBootstrapWithAWrongSecretIsRefusedWhileTheRightOneWorks() throws Exception {
    awaitOpen();
    RegionServer server = servers.get(0);
    FabricOptions options = FabricOptions.defaults("tcp");
    ClusterSecret wrong = ClusterSecret.of("not-the-client-secret!!".getBytes());
    assertThatThrownBy(
            () ->
                FabricClient.connect(
                    options.withClientSecret(Optional.of(wrong)),
                    "127.0.0.1",
                    server.info().fabricPort()))
        .isInstanceOf(KvsException.class)
        .hasMessageContaining("authentication failed");
    // The cluster secret is no client credential either.
    assertThatThrownBy(
            () ->
                FabricClient.connect(
                    options.withClientSecret(Optional.of(SECRET)),
                    "127.0.0.1",
                    server.info().fabricPort()))
        .isInstanceOf(KvsException.class)
        .hasMessageContaining("authentication failed");
    assertThatThrownBy(() -> FabricClient.connect(options, "127.0.0.1", server.info().fabricPort()))
        .isInstanceOf(KvsException.class)
        .hasMessageContaining("requires the client secret");
    try (FabricClient client =
        FabricClient.connect(
            options.withClientSecret(Optional.of(CLIENT_SECRET)),
            "127.0.0.1",
            server.info().fabricPort())) {
      assertThat(client).isNotNull();
    }
  }

  /** An application's credential commands nothing: its client secret proves no control command. */
  @Test
  void theClientSecretCannotCloseARegion() throws Exception {
    RegionDescriptor region = awaitOpen();
    RegionServer primary = server(region.primary());
    try (ControlClient control =
        new ControlClient(TIMEOUT, SecurityOptions.withSecret(CLIENT_SECRET))) {
      ControlReply reply =
          control.call(
              "127.0.0.1",
              primary.info().controlPort(),
              new ControlCommand.Close(region.id(), region.epoch() + 1));
      assertThat(reply.status()).isEqualTo(StatusCode.INVALID_ARGUMENT);
      assertThat(reply.message()).contains("wrong cluster secret");
    }
    assertStillOpen(region, primary);
  }

  private RegionServer server(String id) {
    return servers.stream().filter(s -> s.info().id().equals(id)).findFirst().orElseThrow();
  }

  /** The region is held by its primary at the epoch it had, and the map still says OPEN. */
  private void assertStillOpen(RegionDescriptor region, RegionServer primary) throws Exception {
    try (ControlClient control = new ControlClient(TIMEOUT, SECURITY)) {
      ControlReply list =
          control.call("127.0.0.1", primary.info().controlPort(), new ControlCommand.ListRegions());
      assertThat(list.isOk()).isTrue();
      HeldRegion held =
          list.regions().stream()
              .filter(r -> r.regionId() == region.id())
              .findFirst()
              .orElseThrow();
      assertThat(held.epoch()).isEqualTo(region.epoch());
    }
    RegionDescriptor now = descriptor(region.id());
    assertThat(now.state()).isEqualTo(RegionState.OPEN);
    assertThat(now.epoch()).isEqualTo(region.epoch());
  }

  private RegionDescriptor descriptor(long id) throws Exception {
    for (String child : curator.getChildren().forPath(paths.regions())) {
      RegionDescriptor region =
          ClusterJson.decodeRegion(curator.getData().forPath(paths.regions() + "/" + child));
      if (region.id() == id) {
        return region;
      }
    }
    throw new AssertionError("no region " + id);
  }

  /** Waits until both regions are open; returns one of them. */
  private RegionDescriptor awaitOpen() throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (true) {
      if (curator.checkExists().forPath(paths.regions()) != null) {
        boolean allOpen = true;
        RegionDescriptor wanted = null;
        List<String> children = curator.getChildren().forPath(paths.regions());
        for (String child : children) {
          RegionDescriptor region =
              ClusterJson.decodeRegion(curator.getData().forPath(paths.regions() + "/" + child));
          allOpen &= region.state() == RegionState.OPEN;
          wanted = region;
        }
        if (children.size() == 2 && allOpen && wanted != null) {
          return wanted;
        }
      }
      assertThat(System.nanoTime()).as("regions never all opened").isLessThan(deadline);
      Thread.onSpinWait();
    }
  }

  private static void writeFrame(OutputStream out, byte[] body) throws IOException {
    out.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(body.length).array());
    out.write(body);
    out.flush();
  }

  private static String readFrame(InputStream in) throws IOException {
    DataInputStream data = new DataInputStream(in);
    byte[] length = new byte[4];
    data.readFully(length);
    byte[] body = new byte[ByteBuffer.wrap(length).order(ByteOrder.LITTLE_ENDIAN).getInt()];
    data.readFully(body);
    return new String(body, StandardCharsets.UTF_8);
  }
}
