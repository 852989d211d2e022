package io.kvs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Region#splitKey}: the middle by size, from the index; {@link Region#loadSplitKey}: the
 * median of the recent requests' keys.
 */
class RegionSplitKeyTest {
  @TempDir Path directory;

  @Test
  void theIndexGivesTheMiddleOnceTheLevelsHoldMostOfTheRegion() throws InterruptedException {
    try (Engine engine =
        Engine.open(
            directory.resolve("volume"), EngineOptions.builder().l0SizeBytes(1 << 20).build())) {
      Region region = engine.createRegion("split");
      region.put(bytes("alone"), bytes("v"));
      assertThat(region.splitKey()).isEmpty(); // all of it in L0: the caller walks the keys

      TreeSet<String> keys = new TreeSet<>();
      Random random = new Random(5);
      for (int i = 0; i < 20000; i++) {
        String key = String.format("key%06d", i);
        byte[] value = new byte[300];
        random.nextBytes(value);
        region.put(bytes(key), value);
        keys.add(key);
      }
      keys.add("alone");
      // Compactions run in the background: the index answers once the levels hold most of it.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      Optional<byte[]> middle = region.splitKey();
      while (middle.isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(20);
        middle = region.splitKey();
      }
      assertThat(middle).isPresent();
      String key = new String(middle.get(), StandardCharsets.UTF_8);
      assertThat(keys).contains(key);
      double below = (double) keys.headSet(key).size() / keys.size();
      assertThat(below).isBetween(0.4, 0.6);
    }
  }

  @Test
  void theLoadSplitKeyFollowsTheRequestsNotTheBytes() {
    try (Engine engine =
        Engine.open(directory.resolve("volume"), EngineOptions.builder().build())) {
      Region region = engine.createRegion("load");
      for (int i = 0; i < 2000; i++) {
        region.put(bytes(String.format("key%06d", i)), bytes("v"));
      }
      // 2,000 puts, one key each: the median of the sampled puts is the middle of the keys.
      String even = new String(region.loadSplitKey().orElseThrow(), StandardCharsets.UTF_8);
      assertThat(even).isBetween("key000900", "key001100");

      // Then reads of ten keys near the top, 40,000 of them: the sample's last 1,024 keys are
      // theirs, and the split by load falls among them while the split by size stays put.
      for (int i = 0; i < 40000; i++) {
        region.get(bytes(String.format("key%06d", 1990 + i % 10)));
      }
      String hot = new String(region.loadSplitKey().orElseThrow(), StandardCharsets.UTF_8);
      assertThat(hot).isBetween("key001990", "key001999");
    }
  }

  @Test
  void tooFewRequestsSayNothing() {
    try (Engine engine =
        Engine.open(directory.resolve("volume"), EngineOptions.builder().build())) {
      Region region = engine.createRegion("quiet");
      for (int i = 0; i < 100; i++) {
        region.put(bytes(String.format("key%06d", i)), bytes("v")); // 7 sampled
      }
      assertThat(region.loadSplitKey()).isEmpty();
    }
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
