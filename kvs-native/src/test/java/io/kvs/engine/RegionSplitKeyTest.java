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

/** {@link Region#splitKey}: the middle by size, from the index. */
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

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
