package io.kvs.server.regions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.control.StreamKey;
import io.kvs.engine.Engine;
import io.kvs.engine.EngineOptions;
import io.kvs.engine.Region;
import io.kvs.service.RegionService;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A primary prepares a handover of its leadership by merging its in-memory level into its levels
 * (so that the backup promoted replays few writes), only when it leads the region at the epoch
 * asked and only when the level holds enough to be worth a merge.
 */
class HostedRegionsHandoverTest {
  @TempDir Path directory;

  @Test
  void aPrimaryMergesItsInMemoryLevelAheadOfItsHandover() throws Exception {
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create(engine)) {
      HostedRegions regions =
          new HostedRegions("s1", engine, service, directory, id -> null, () -> 1L);
      regions.open(region(1, "s1", 3), ReplicationMode.NONE, 1, StreamKey.random());
      regions.open(region(2, "s1", 3), ReplicationMode.NONE, 1, StreamKey.random());
      Region big = engineRegion(regions, 1);
      Region small = engineRegion(regions, 2);
      byte[] value = new byte[1024];
      long bytes = 0;
      for (int i = 0; bytes < HostedRegions.HANDOVER_MERGE_FROM_BYTES + (1 << 20); i++) {
        byte[] key = ("a" + i).getBytes(StandardCharsets.UTF_8);
        big.put(key, value);
        bytes += key.length + value.length;
      }
      small.put(new byte[] {(byte) 0x90}, value);

      Map<String, Long> prepared = regions.prepareHandover(1, 3);
      assertThat(prepared.get("merged")).isEqualTo(1L);
      assertThat(prepared.get("l0Bytes")).isGreaterThanOrEqualTo(bytes);
      assertThat(big.stats().l0KvBytes()).isZero();
      assertThat(big.stats().levelKvBytes()).isGreaterThanOrEqualTo(bytes);
      assertThat(big.get("a0".getBytes(StandardCharsets.UTF_8))).isEqualTo(value);

      // Too little to be worth a merge: left in memory.
      assertThat(regions.prepareHandover(2, 3)).containsEntry("merged", 1L);
      assertThat(small.stats().l0KvBytes()).isPositive();
      assertThat(small.stats().levelKvBytes()).isZero();

      assertThatThrownBy(() -> regions.prepareHandover(1, 2))
          .isInstanceOfSatisfying(
              KvsException.class, e -> assertThat(e.status()).isEqualTo(StatusCode.STALE_EPOCH));
      assertThatThrownBy(() -> regions.prepareHandover(7, 3))
          .isInstanceOfSatisfying(
              KvsException.class, e -> assertThat(e.status()).isEqualTo(StatusCode.STALE_EPOCH));
      regions.open(region(1, "s2", 4), ReplicationMode.NONE, 1, StreamKey.random());
      assertThatThrownBy(() -> regions.prepareHandover(1, 4))
          .isInstanceOfSatisfying(
              KvsException.class, e -> assertThat(e.status()).isEqualTo(StatusCode.NOT_PRIMARY));
    }
  }

  private static Region engineRegion(HostedRegions regions, long id) {
    return regions.samples().stream()
        .filter(sample -> sample.regionId() == id)
        .findFirst()
        .orElseThrow()
        .region();
  }

  private static RegionDescriptor region(long id, String primary, long epoch) {
    byte[] start = id == 1 ? new byte[0] : new byte[] {(byte) 0x80};
    byte[] end = id == 1 ? new byte[] {(byte) 0x80} : new byte[0];
    List<String> backups = primary.equals("s1") ? List.of() : List.of("s1");
    return new RegionDescriptor(id, start, end, primary, backups, epoch, RegionState.OPENING);
  }
}
