package io.kvs.server.regions;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.control.HeldRegion;
import io.kvs.core.control.StreamKey;
import io.kvs.engine.Engine;
import io.kvs.engine.EngineOptions;
import io.kvs.service.RegionService;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A lost ZooKeeper session closes the regions opened under it, and only those: one the master
 * opened here again under the server's next session stays (the chaos campaign's seed 4242 lost
 * writes after a session's loss, acted on late, closed a backup the master had just opened under
 * the new session, and its primary kept streaming to it).
 */
class HostedRegionsSessionTest {
  @TempDir Path directory;

  @Test
  void aLostSessionClosesTheRegionsOpenedUnderItOnly() throws Exception {
    AtomicLong session = new AtomicLong(0x11);
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create(engine)) {
      HostedRegions regions =
          new HostedRegions("s1", engine, service, directory, id -> null, session::get);
      regions.open(region(1, 3), ReplicationMode.NONE, 1, StreamKey.random());
      regions.open(region(2, 3), ReplicationMode.NONE, 1, StreamKey.random());
      session.set(0x22); // the server registered again under a new session
      regions.open(region(2, 4), ReplicationMode.NONE, 1, StreamKey.random());
      regions.open(region(3, 1), ReplicationMode.NONE, 1, StreamKey.random());

      assertThat(regions.closeOpenedUnder(0x11)).isEqualTo(1);
      assertThat(regions.list()).extracting(HeldRegion::regionId).containsExactly(2L, 3L);
      assertThat(regions.closeOpenedUnder(0x11)).as("acted on once").isZero();
      assertThat(regions.closeOpenedUnder(0x22)).isEqualTo(2);
      assertThat(regions.list()).isEmpty();
    }
  }

  private static RegionDescriptor region(long id, long epoch) {
    byte[] start = id == 1 ? new byte[0] : new byte[] {(byte) (id * 0x40)};
    byte[] end = id == 3 ? new byte[0] : new byte[] {(byte) ((id + 1) * 0x40)};
    return new RegionDescriptor(id, start, end, "s1", List.of(), epoch, RegionState.OPENING);
  }
}
