package io.kvs.core.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.StatusCode;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ControlJsonTest {
  @Test
  void commandsAndRepliesRoundTrip() {
    RegionDescriptor region =
        new RegionDescriptor(
            3, new byte[0], new byte[] {9}, "s1", List.of("s2"), 5, RegionState.OPENING);
    for (ReplicationMode mode : ReplicationMode.values()) {
      ControlCommand open = new ControlCommand.Open(region, mode, StreamKey.random());
      assertThat(ControlJson.decodeCommand(ControlJson.encode(open))).isEqualTo(open);
    }
    ControlCommand.Open withBackups =
        new ControlCommand.Open(
            region,
            ReplicationMode.SEND_INDEX,
            2,
            StreamKey.random(),
            java.util.Map.of(
                "s2",
                new io.kvs.core.cluster.ServerInfo("s2", "10.0.0.2", 7001, 7002, "tcp", 7003)));
    ControlCommand.Open decoded =
        (ControlCommand.Open) ControlJson.decodeCommand(ControlJson.encode(withBackups));
    assertThat(decoded).isEqualTo(withBackups);
    assertThat(decoded.backups().get("s2").fabricPort()).isEqualTo(7002);
    ControlCommand close = new ControlCommand.Close(3, 6);
    assertThat(ControlJson.decodeCommand(ControlJson.encode(close))).isEqualTo(close);
    ControlCommand.Seal seal = new ControlCommand.Seal(3, 6, new byte[] {0, (byte) 0xff});
    ControlCommand.Seal sealed =
        (ControlCommand.Seal) ControlJson.decodeCommand(ControlJson.encode(seal));
    assertThat(sealed.regionId()).isEqualTo(3);
    assertThat(sealed.epoch()).isEqualTo(6);
    assertThat(sealed.key()).isEqualTo(new byte[] {0, (byte) 0xff});
    assertThat(sealed.byLoad()).isFalse();
    ControlCommand.Seal forLoad =
        (ControlCommand.Seal)
            ControlJson.decodeCommand(
                ControlJson.encode(new ControlCommand.Seal(3, 6, new byte[0], true)));
    assertThat(forLoad.byLoad()).isTrue();
    assertThat(forLoad.key()).isEmpty();
    ControlCommand retire = new ControlCommand.Retire(3, 6);
    assertThat(ControlJson.decodeCommand(ControlJson.encode(retire))).isEqualTo(retire);
    ControlCommand prepare = new ControlCommand.PrepareHandover(3, 6);
    assertThat(ControlJson.decodeCommand(ControlJson.encode(prepare))).isEqualTo(prepare);
    ControlCommand list = new ControlCommand.ListRegions();
    assertThat(ControlJson.decodeCommand(ControlJson.encode(list))).isEqualTo(list);
    ControlReply reply =
        new ControlReply(StatusCode.OK, "", List.of(new HeldRegion(3, 5, RegionRole.BACKUP)));
    assertThat(ControlJson.decodeReply(ControlJson.encode(reply))).isEqualTo(reply);
    ControlReply refused = ControlReply.failed(StatusCode.STALE_EPOCH, "epoch 6 here");
    assertThat(ControlJson.decodeReply(ControlJson.encode(refused))).isEqualTo(refused);
    ControlCommand stats = new ControlCommand.Stats();
    assertThat(ControlJson.decodeCommand(ControlJson.encode(stats))).isEqualTo(stats);
    ControlCommand digest = new ControlCommand.Digest(17);
    assertThat(ControlJson.decodeCommand(ControlJson.encode(digest))).isEqualTo(digest);
    ControlCommand regionStats = new ControlCommand.RegionStats(9);
    assertThat(ControlJson.decodeCommand(ControlJson.encode(regionStats))).isEqualTo(regionStats);
    ControlReply counters =
        new ControlReply(
            StatusCode.OK,
            "",
            List.of(),
            Map.of("replication.logBytes", 1L << 40, "backup.l0Bytes", 0L));
    assertThat(ControlJson.decodeReply(ControlJson.encode(counters))).isEqualTo(counters);
  }

  @Test
  void statsThatAreNoIntegersAreRejected() {
    assertThatThrownBy(
            () ->
                ControlJson.decodeReply(
                    "{\"status\":0,\"message\":\"\",\"regions\":[],\"stats\":{\"a\":\"x\"}}"
                        .getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no integer");
  }

  /** Commands and replies carry the protocol's version; another one is refused naming both. */
  @Test
  void commandsAndRepliesOfAnotherVersionAreRefused() {
    String list = new String(ControlJson.encode(new ControlCommand.ListRegions()), UTF8);
    assertThat(list).contains("\"version\":" + ControlJson.VERSION);
    assertThat(ControlJson.decodeCommand("{\"command\":\"list\"}".getBytes(UTF8)))
        .isEqualTo(new ControlCommand.ListRegions());
    assertThatThrownBy(
            () -> ControlJson.decodeCommand("{\"version\":2,\"command\":\"list\"}".getBytes(UTF8)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("a command of control protocol version 2")
        .hasMessageContaining("speaks version 1");
    String ok = new String(ControlJson.encode(ControlReply.ok()), UTF8);
    assertThatThrownBy(
            () ->
                ControlJson.decodeReply(
                    ok.replace("\"version\":1", "\"version\":3").getBytes(UTF8)))
        .hasMessageContaining("a reply of control protocol version 3");
  }

  private static final java.nio.charset.Charset UTF8 = StandardCharsets.UTF_8;

  @Test
  void unknownOrIncompleteCommandsAreRejected() {
    assertThatThrownBy(
            () ->
                ControlJson.decodeCommand(
                    "{\"command\":\"drop\"}".getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown command");
    assertThatThrownBy(
            () ->
                ControlJson.decodeCommand(
                    "{\"command\":\"open\",\"mode\":\"none\"}".getBytes(StandardCharsets.UTF_8)))
        .hasMessageContaining("without a region");
  }
}
