package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.client.KvsClient;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.security.ClusterSecret;
import io.kvs.core.wire.BlockingFrames;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.WireCodec;
import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client's door serves client requests only: a stranger holding the client secret (any
 * application) sends a send-index backup's replication messages -- TRIMs of every log segment it
 * could name, FLUSH-TAIL, INSTALL-LEVEL, FLUSH and OPEN -- to the client TCP port of each backup,
 * for real, over the port's own handshake. Every one is refused as a malformed client request. Then
 * the primary is killed with SIGKILL, a backup is promoted, and every write acknowledged before is
 * read back: the backups' log copies and levels were never touched. Before the doors were decided
 * by the connection, the same TRIMs reached a backup's replication path and dropped its log copies,
 * so the promoted backup lost acknowledged writes.
 */
class ClientDoorIT {
  private static final int KEYS = 3000;
  private static final Duration AWAIT = Duration.ofSeconds(120);

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  @Test
  void replicationMessagesOnTheClientPortAreRefusedAndAPromotionLosesNothing() throws Exception {
    try (ProcessCluster cluster =
        ProcessCluster.start(
            dir.resolve("cluster"),
            "--servers",
            "3",
            "--regions",
            "1",
            "--replication",
            "3",
            "--l0-size",
            Long.toString(1 << 20))) {
      ClusterSecret clientSecret = ClusterSecret.read(cluster.dir().resolve("client-secret"));
      RegionDescriptor region;
      int refused;
      int taken;
      try (KvsClient client = cluster.client(Duration.ofSeconds(10))) {
        ProcessCluster.awaitFullStrength(client, 1, 3, AWAIT);
        // ~6 MiB: several log segments sealed and copied, levels installed on the backups.
        for (int i = 0; i < KEYS; i++) {
          client.put(TestKeys.key("door", i), TestKeys.value("door", i, 0));
        }
        region = client.regionMap().regions().get(0);
        int[] outcome = new int[2];
        for (String backup : region.backups()) {
          ServerInfo server = cluster.servers().get(backup);
          attack(server, region, clientSecret, outcome);
        }
        refused = outcome[0];
        taken = outcome[1];
        System.out.printf(
            "ClientDoorIT: %d replication messages sent to the backups' client ports, %d refused,"
                + " %d taken as replication%n",
            refused + taken, refused, taken);
      }
      // The primary dies: a backup in sync is promoted, with what it holds.
      cluster.inject("kill", region.primary());
      try (KvsClient client = cluster.client(Duration.ofSeconds(30))) {
        ProcessCluster.awaitCondition(
            "a backup promoted in place of " + region.primary(),
            AWAIT,
            () -> {
              RegionDescriptor now = client.regionMap().regions().get(0);
              return now.epoch() > region.epoch() && !now.primary().equals(region.primary());
            });
        int lost = 0;
        for (int i = 0; i < KEYS; i++) {
          Optional<byte[]> value = client.get(TestKeys.key("door", i));
          if (value.isEmpty() || !Arrays.equals(value.get(), TestKeys.value("door", i, 0))) {
            lost++;
          }
        }
        System.out.printf("ClientDoorIT: %d of %d acknowledged writes lost%n", lost, KEYS);
        assertThat(taken).as("replication messages taken on a client's door").isZero();
        assertThat(refused).isGreaterThan(0);
        assertThat(lost).as("acknowledged writes lost after the promotion").isZero();
        cluster.inject("restart", region.primary());
        ProcessCluster.awaitFullStrength(client, 1, 3, AWAIT);
      }
      String verified = cluster.verify();
      System.out.println("ClientDoorIT: " + verified.lines().reduce((a, b) -> b).orElse(""));
    }
  }

  /**
   * Sends replication messages of {@code region} to {@code server}'s client TCP port after a
   * handshake proving the client secret; counts in {@code outcome} those refused as malformed
   * client requests ([0], as they all must be) and those answered as replication messages ([1]:
   * their reply is a replication control reply, not a client reply).
   */
  private static void attack(
      ServerInfo server, RegionDescriptor region, ClusterSecret secret, int[] outcome)
      throws IOException {
    List<byte[]> messages = new ArrayList<>();
    // TRIM every copy it could name: both logs, segments 0..255, chain positions 0..15.
    List<long[]> trimmed = new ArrayList<>();
    for (int kind = 1; kind <= 2; kind++) {
      for (long segment = 0; segment < 256; segment++) {
        for (long chain = 0; chain < 16; chain++) {
          trimmed.add(new long[] {kind, segment, chain});
        }
      }
    }
    for (int from = 0; from < trimmed.size(); from += 4096) {
      messages.add(trim(region, trimmed.subList(from, Math.min(trimmed.size(), from + 4096))));
    }
    messages.add(flushTail(region));
    messages.add(installEmptyLevel(region));
    messages.add(control(region, 2)); // FLUSH
    messages.add(openMessage(region));
    try (Socket socket = new Socket(server.host(), server.tcpPort())) {
      socket.setSoTimeout(10_000);
      assertThat(BlockingFrames.handshake(socket, Optional.of(secret)).status())
          .isEqualTo(StatusCode.OK);
      for (byte[] message : messages) {
        writeFrame(socket, message);
        byte[] answer = readFrame(socket);
        Reply reply;
        try {
          reply = WireCodec.decodeReply(answer);
        } catch (RuntimeException notAClientReply) {
          outcome[1]++; // a replication control reply: the message reached replication
          continue;
        }
        assertThat(reply.status()).as(reply.message()).isEqualTo(StatusCode.INVALID_ARGUMENT);
        assertThat(reply.message()).contains("client's connection");
        outcome[0]++;
      }
    }
  }

  /**
   * The 24-byte head of every replication message: magic "KVSR", type, version 2, region, epoch.
   */
  private static ByteBuffer head(RegionDescriptor region, int type, int size) {
    ByteBuffer out = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    out.putInt(0x5253564b).put((byte) type).put((byte) 2).put(new byte[2]);
    out.putLong(region.id()).putLong(region.epoch());
    return out;
  }

  private static byte[] trim(RegionDescriptor region, List<long[]> copies) {
    ByteBuffer out = head(region, 6, 32 + 24 * copies.size());
    out.putInt(copies.size()).putInt(0);
    for (long[] copy : copies) {
      out.put((byte) copy[0]).put(new byte[7]).putLong(copy[1]).putLong(copy[2]);
    }
    return out.array();
  }

  private static byte[] flushTail(RegionDescriptor region) {
    ByteBuffer out = head(region, 3, 56);
    out.put((byte) 1).put((byte) 1).put((byte) 1).put((byte) 0).putInt(0);
    out.putLong(0).putLong(1).putInt(0).putInt(0);
    return out.array();
  }

  private static byte[] installEmptyLevel(RegionDescriptor region) {
    ByteBuffer out = head(region, 5, 48);
    out.putInt(1).putInt(0xffffffff).putInt(0).putInt(0).putLong(Long.MAX_VALUE);
    return out.array();
  }

  private static byte[] control(RegionDescriptor region, int type) {
    ByteBuffer out = head(region, type, 40);
    out.putInt(0).putInt(0).putLong(0);
    return out.array();
  }

  private static byte[] openMessage(RegionDescriptor region) {
    ByteBuffer out = head(region, 1, 72);
    out.putInt(1).putInt(0).putLong(0).put(new byte[32]);
    return out.array();
  }

  private static void writeFrame(Socket socket, byte[] body) throws IOException {
    BlockingFrames.write(socket.getOutputStream(), body);
  }

  private static byte[] readFrame(Socket socket) throws IOException {
    return BlockingFrames.read(socket.getInputStream());
  }
}
