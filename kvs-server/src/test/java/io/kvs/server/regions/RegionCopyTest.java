package io.kvs.server.regions;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.KeyValue;
import io.kvs.core.KvsException;
import io.kvs.engine.Engine;
import io.kvs.engine.EngineOptions;
import io.kvs.engine.Region;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A merge on one server's disk ({@link RegionCopy#merge}), on a real engine: the merged region
 * holds every live pair of both (and nothing they deleted), both go; a merged region half made
 * beside its lower source (a crash during the copy) is made again from scratch; one made already (a
 * crash between dropping the lower source and the upper) only loses the upper source; a missing
 * source makes nothing.
 */
class RegionCopyTest {
  @TempDir Path directory;

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static boolean exists(Engine engine, String name) {
    try {
      engine.openRegion(name);
      return true;
    } catch (KvsException e) {
      return false;
    }
  }

  private static void load(Engine engine, String name, String prefix, int pairs, int valueBytes) {
    Region region = engine.createRegion(name);
    for (int i = 0; i < pairs; i++) {
      region.put(bytes(prefix + String.format("%05d", i)), new byte[valueBytes + i % 7]);
    }
    region.delete(bytes(prefix + "00003"));
  }

  private static List<KeyValue> all(Engine engine, String name) {
    return engine.openRegion(name).scan(null, null, 1_000_000);
  }

  @Test
  void mergesEveryLivePairAndRecoversFromACrashAtEveryStep() {
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults())) {
      load(engine, "left", "a", 3000, 100); // small values, in place
      load(engine, "right", "b", 500, 5000); // large values, in the log
      long[] copied = new long[1];

      // A crash during the copy left a half-made merged region (with a pair of its own).
      engine.createRegion("merged").put(bytes("a00003"), bytes("half made")); // deleted in left
      assertThat(
              RegionCopy.merge(
                  engine, "left", "right", "merged", name -> exists(engine, name), copied))
          .isEqualTo(RegionCopy.Outcome.MERGED);
      assertThat(copied[0]).isEqualTo(2999 + 499);
      List<KeyValue> merged = all(engine, "merged");
      assertThat(merged).hasSize(2999 + 499);
      assertThat(merged.get(0).key()).isEqualTo(bytes("a00000"));
      assertThat(merged.get(1).key()).isEqualTo(bytes("a00001"));
      assertThat(merged.get(1).value()).hasSize(101);
      assertThat(merged.get(merged.size() - 1).value()).hasSize(5000 + 499 % 7);
      assertThat(merged).noneMatch(pair -> new String(pair.key()).endsWith("00003"));
      assertThat(exists(engine, "left")).isFalse();
      assertThat(exists(engine, "right")).isFalse();

      // Made already, the upper source still there (a crash between the two drops): finished.
      load(engine, "right", "b", 10, 10);
      assertThat(
              RegionCopy.merge(
                  engine, "left", "right", "merged", name -> exists(engine, name), copied))
          .isEqualTo(RegionCopy.Outcome.DONE);
      assertThat(exists(engine, "right")).isFalse();
      assertThat(all(engine, "merged")).hasSize(2999 + 499);

      // Nothing to make it from.
      load(engine, "l2", "c", 10, 10);
      assertThat(RegionCopy.merge(engine, "l2", "r2", "m2", name -> exists(engine, name), copied))
          .isEqualTo(RegionCopy.Outcome.MISSING);
      assertThat(exists(engine, "m2")).isFalse();
      assertThat(exists(engine, "l2")).isTrue();
    }
  }
}
