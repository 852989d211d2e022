package io.kvs.server.regions;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.StreamKey;
import io.kvs.engine.Engine;
import io.kvs.engine.EngineOptions;
import io.kvs.service.RegionService;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A primary's open takes its backups' endpoints from the master's open when it carries them, and
 * looks up in ZooKeeper only those it lacks (a read per backup on the open's path: 6-25 ms of a
 * daughter's open under the elastic benchmark's load).
 */
class HostedRegionsEndpointsTest {
  @TempDir Path directory;

  @Test
  void aPrimaryLooksUpOnlyTheBackupsItsOpenDidNotCarry() throws Exception {
    List<String> lookedUp = new ArrayList<>();
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create(engine)) {
      HostedRegions regions =
          new HostedRegions(
              "s1",
              engine,
              service,
              directory,
              id -> {
                lookedUp.add(id);
                return registration(id);
              },
              () -> 1L);
      regions.open(
          region(1, List.of("s2", "s3")),
          ReplicationMode.SEND_INDEX,
          1,
          StreamKey.random(),
          Map.of("s2", registration("s2"), "s3", registration("s3")));
      assertThat(lookedUp).isEmpty();

      regions.open(
          region(2, List.of("s2", "s3")),
          ReplicationMode.SEND_INDEX,
          1,
          StreamKey.random(),
          Map.of("s3", registration("s3")));
      assertThat(lookedUp).containsExactly("s2");

      regions.open(region(3, List.of("s3")), ReplicationMode.SEND_INDEX, 1, StreamKey.random());
      assertThat(lookedUp).containsExactly("s2", "s3");
      assertThat(regions.list()).hasSize(3);
    }
  }

  private static ServerInfo registration(String id) {
    // Nobody listens there: the streams' connects fail on the replication thread, not the open.
    return new ServerInfo(id, "127.0.0.1", 1, 9, "tcp", 1);
  }

  private static RegionDescriptor region(long id, List<String> backups) {
    byte[] start = id == 1 ? new byte[0] : new byte[] {(byte) (id * 0x40)};
    byte[] end = id == 3 ? new byte[0] : new byte[] {(byte) ((id + 1) * 0x40)};
    return new RegionDescriptor(id, start, end, "s1", backups, 1, RegionState.OPENING);
  }
}
