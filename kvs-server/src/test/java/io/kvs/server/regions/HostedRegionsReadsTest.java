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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The control RPC's reads ({@code list}, {@code stats}, {@code regionStats}, {@code digest}) answer
 * while a command holds the regions (an open replaying a long log, a close waiting for its
 * backups): they read what the last command published, not under its lock.
 */
class HostedRegionsReadsTest {
  /** The master's bound on {@code list}. */
  private static final long BOUND_SECONDS = 2;

  @TempDir Path directory;

  @Test
  void readsDoNotWaitForACommandInProgress() throws Exception {
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create(engine)) {
      HostedRegions regions =
          new HostedRegions("s1", engine, service, directory, id -> null, () -> 0);
      regions.open(
          new RegionDescriptor(
              1, new byte[0], new byte[0], "s1", List.of(), 3, RegionState.OPENING),
          ReplicationMode.NONE,
          1,
          StreamKey.random());
      // A command in progress: it holds the regions' lock as an open or a close does.
      CountDownLatch holding = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      Thread command =
          new Thread(
              () -> {
                synchronized (regions) {
                  holding.countDown();
                  try {
                    release.await();
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                }
              });
      command.start();
      try {
        assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(answered(regions::list)).extracting(HeldRegion::regionId).containsExactly(1L);
        assertThat(answered(regions::stats)).containsEntry("primary.regions", 1L);
        assertThat(answered(() -> regions.regionStats(1))).containsEntry("epoch", 3L);
        assertThat(answered(() -> regions.digest(1))).containsKey("digest");
      } finally {
        release.countDown();
        command.join();
      }
    }
  }

  /** What {@code read} returns, asked from another thread, within the master's bound. */
  private static <T> T answered(Supplier<T> read) throws Exception {
    return CompletableFuture.supplyAsync(read).get(BOUND_SECONDS, TimeUnit.SECONDS);
  }
}
