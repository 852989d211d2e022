package io.kvs.server.regions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.control.HeldRegion;
import io.kvs.core.control.StreamKey;
import io.kvs.engine.Engine;
import io.kvs.engine.EngineOptions;
import io.kvs.server.control.NotInSyncException;
import io.kvs.service.RegionService;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A send-index backup is opened in sync (not joining) only while this process holds the region's
 * stream, or when the region is created: a restarted backup's replica may lack acknowledged writes
 * that had landed only in the killed process's memory, and a backup in sync may be promoted (the
 * power cut that lost acknowledged writes: the master sent a dead backup's open again to its
 * restarted process, which took it in sync and was then promoted).
 */
class HostedRegionsInSyncTest {
  private static final ReplicationMode SEND_INDEX = ReplicationMode.SEND_INDEX;

  @TempDir Path directory;

  @Test
  void aRestartedBackupRefusesToBeInSyncAndOpensJoining() throws Exception {
    try (Server server = new Server(directory)) {
      server.regions.open(backupOf(7, 1, false), SEND_INDEX, 1, StreamKey.random());
      assertThat(server.regions.list())
          .as("a region created at its first epoch opens in sync")
          .containsExactly(new HeldRegion(7, 1, RegionRole.BACKUP));
      server.regions.open(backupOf(7, 2, false), SEND_INDEX, 1, StreamKey.random());
      assertThat(server.regions.list()).extracting(HeldRegion::epoch).containsExactly(2L);
    }
    try (Server restarted = new Server(directory)) {
      assertThatThrownBy(
              () ->
                  restarted.regions.open(backupOf(7, 2, false), SEND_INDEX, 1, StreamKey.random()))
          .as("the same epoch's open, sent again to the restarted process")
          .isInstanceOf(NotInSyncException.class)
          .hasMessageContaining("open it joining");
      assertThatThrownBy(
              () ->
                  restarted.regions.open(backupOf(7, 3, false), SEND_INDEX, 1, StreamKey.random()))
          .isInstanceOf(NotInSyncException.class);
      assertThat(restarted.regions.list()).as("nothing opened by a refusal").isEmpty();
      restarted.regions.open(backupOf(7, 4, true), SEND_INDEX, 1, StreamKey.random());
      assertThat(restarted.regions.list()).containsExactly(new HeldRegion(7, 4, RegionRole.BACKUP));
      restarted.regions.open(backupOf(7, 4, false), SEND_INDEX, 1, StreamKey.random());
      assertThat(restarted.regions.list())
          .as("in sync once its primary reports the catch-up done")
          .containsExactly(new HeldRegion(7, 4, RegionRole.BACKUP));
    }
  }

  @Test
  void aBackupThatClosedItOrNeverHeldItRefusesToBeInSync() throws Exception {
    try (Server server = new Server(directory)) {
      server.regions.open(backupOf(3, 1, false), SEND_INDEX, 1, StreamKey.random());
      server.regions.close(3, 2);
      assertThatThrownBy(
              () -> server.regions.open(backupOf(3, 3, false), SEND_INDEX, 1, StreamKey.random()))
          .as("closed: the writes since went by it")
          .isInstanceOf(NotInSyncException.class);
      assertThatThrownBy(
              () -> server.regions.open(backupOf(4, 5, false), SEND_INDEX, 1, StreamKey.random()))
          .as("never held here past its first epoch (an empty disk)")
          .isInstanceOf(NotInSyncException.class);
      assertThat(server.regions.list()).isEmpty();
    }
  }

  @Test
  void underBuildIndexABackupOpensFromItsOwnData() throws Exception {
    try (Server server = new Server(directory)) {
      server.regions.open(
          backupOf(5, 3, false), ReplicationMode.BUILD_INDEX, 1, StreamKey.random());
      assertThat(server.regions.list()).containsExactly(new HeldRegion(5, 3, RegionRole.BACKUP));
    }
  }

  /** Region {@code id} led by s1 with this server (s2) its backup, joining or in sync. */
  private static RegionDescriptor backupOf(long id, long epoch, boolean joining) {
    return new RegionDescriptor(
        id,
        new byte[] {(byte) (id * 0x10)},
        new byte[] {(byte) (id * 0x10 + 0x10)},
        "s1",
        List.of("s2"),
        joining ? List.of("s2") : List.of(),
        epoch,
        RegionState.OPENING);
  }

  /** Server s2's engine, region service and hosted regions on {@code directory}. */
  private static final class Server implements AutoCloseable {
    final Engine engine;
    final RegionService service;
    final HostedRegions regions;

    Server(Path directory) {
      engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
      service = RegionService.create(engine);
      regions = new HostedRegions("s2", engine, service, directory, id -> null, () -> 0x5);
    }

    @Override
    public void close() {
      regions.closeAll();
      service.close();
      engine.close();
    }
  }
}
