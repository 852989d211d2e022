package io.kvs.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.ClosedException;
import io.kvs.core.KeyValue;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Batched scans: {@link Region#scan} and {@link RegionIterator#nextPairs}. */
class RegionScanTest {
  @TempDir Path directory;

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static List<KeyValue> expected(TreeMap<String, byte[]> model, String from, String to) {
    List<KeyValue> pairs = new ArrayList<>();
    for (Map.Entry<String, byte[]> entry : model.subMap(from, true, to, false).entrySet()) {
      pairs.add(new KeyValue(bytes(entry.getKey()), entry.getValue()));
    }
    return pairs;
  }

  /** Small, medium and large values, through a small L0 so that levels and logs hold them. */
  private static TreeMap<String, byte[]> load(Region region) {
    TreeMap<String, byte[]> model = new TreeMap<>();
    Random random = new Random(11);
    for (int i = 0; i < 20000; i++) {
      String key = String.format("key%05d", random.nextInt(6000));
      int kind = random.nextInt(10);
      byte[] value =
          new byte[kind < 5 ? random.nextInt(90) : kind < 8 ? 200 : 1100 + random.nextInt(2000)];
      random.nextBytes(value);
      region.put(bytes(key), value);
      model.put(key, value);
    }
    return model;
  }

  @Test
  void scansReturnEveryPairInOrderWithinBoundsAndLimit() {
    try (Engine engine =
        Engine.open(
            directory.resolve("volume"), EngineOptions.builder().l0SizeBytes(1 << 20).build())) {
      Region region = engine.createRegion("scan");
      TreeMap<String, byte[]> model = load(region);
      RegionStats stats = region.stats();
      assertThat(stats.compactions()).isPositive();
      // Traffic by cause adds up per level.
      assertThat(stats.levelBytesWritten()).hasSize(RegionStats.LEVELS);
      assertThat(stats.levelBytesWritten().stream().mapToLong(Long::longValue).sum())
          .isEqualTo(stats.compactionBytesWritten())
          .isPositive();
      assertThat(stats.levelBytesRead().stream().mapToLong(Long::longValue).sum())
          .isEqualTo(stats.compactionBytesRead());

      assertThat(region.scan(bytes("key01000"), bytes("key02000"), 100_000))
          .containsExactlyElementsOf(expected(model, "key01000", "key02000"));
      assertThat(region.scan(null, null, 50))
          .containsExactlyElementsOf(expected(model, "", "zzz").subList(0, 50));
      assertThat(region.scan(bytes("zzz"), null, 10)).isEmpty();

      // Paging with an iterator: small batches and a byte bound still see everything once.
      List<KeyValue> paged = new ArrayList<>();
      try (RegionIterator it = region.newIterator(bytes("key04000"))) {
        it.seek(bytes("key00500"));
        while (it.isValid()) {
          List<KeyValue> batch = it.nextPairs(37, 16 << 10);
          assertThat(batch).isNotEmpty().hasSizeLessThanOrEqualTo(37);
          paged.addAll(batch);
        }
        assertThat(it.nextPairs(10, 1 << 20)).isEmpty();
      }
      assertThat(paged).containsExactlyElementsOf(expected(model, "key00500", "key04000"));
      assertThat(region.stats().valueBytesRead()).isGreaterThan(stats.valueBytesRead());
    }
  }

  @Test
  void badArgumentsAndClosedHandlesAreRefused() {
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults())) {
      Region region = engine.createRegion("scan");
      region.put(bytes("a"), bytes("1"));
      assertThatThrownBy(() -> region.scan(null, null, 0))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("limit");
      RegionIterator it = region.newIterator(null);
      it.seekToFirst();
      assertThatThrownBy(() -> it.nextPairs(1, 0)).isInstanceOf(IllegalArgumentException.class);
      region.close();
      assertThatThrownBy(() -> it.nextPairs(1, 1024)).isInstanceOf(ClosedException.class);
      assertThatThrownBy(() -> region.scan(null, null, 1)).isInstanceOf(ClosedException.class);
    }
  }
}
