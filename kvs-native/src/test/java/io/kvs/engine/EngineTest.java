package io.kvs.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.ClosedException;
import io.kvs.core.InvalidRequestException;
import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EngineTest {
  @TempDir Path directory;

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private Engine open() {
    return Engine.open(directory.resolve("volume"), EngineOptions.defaults());
  }

  /**
   * A region's reopening (a promotion: a sync, an adoption, a replay) holds up no other region's
   * open, creation or drop: a server promoting several regions after a failure promotes them side
   * by side. The reopening here waits, inside its change, until another region was created, opened
   * and dropped; done one after another, that wait would never end.
   */
  @Test
  void aReopeningHoldsUpNoOtherRegion() throws Exception {
    try (Engine engine = open()) {
      Region first = engine.createRegion("first");
      first.put(bytes("k"), bytes("v"));
      engine.createRegion("dropped");
      CountDownLatch othersDone = new CountDownLatch(1);
      ExecutorService others = Executors.newSingleThreadExecutor();
      try {
        Region reopened =
            engine.reopenRegion(
                "first",
                () -> {
                  Future<?> work =
                      others.submit(
                          () -> {
                            engine.createRegion("second").put(bytes("k2"), bytes("v2"));
                            engine.openRegion("second");
                            engine.dropRegion("dropped");
                            othersDone.countDown();
                          });
                  try {
                    assertThat(othersDone.await(30, TimeUnit.SECONDS))
                        .as("the other regions' changes finished during the reopening")
                        .isTrue();
                    work.get();
                  } catch (InterruptedException | ExecutionException e) {
                    throw new AssertionError(e);
                  }
                });
        assertThat(reopened.get(bytes("k"))).isEqualTo(bytes("v"));
        assertThatThrownBy(() -> first.get(bytes("k"))).isInstanceOf(ClosedException.class);
        assertThat(engine.openRegion("second").get(bytes("k2"))).isEqualTo(bytes("v2"));
        assertThatThrownBy(() -> engine.openRegion("dropped"))
            .isInstanceOfSatisfying(
                KvsException.class, e -> assertThat(e.status()).isEqualTo(StatusCode.NOT_FOUND));
      } finally {
        others.shutdownNow();
      }
    }
  }

  @Test
  void putGetDeleteWithArraysAndSurviveReopen() {
    Map<String, byte[]> model = new HashMap<>();
    Random random = new Random(5);
    try (Engine engine = open()) {
      Region region = engine.createRegion("users");
      for (int i = 0; i < 500; i++) {
        byte[] value = new byte[random.nextInt(3000)];
        random.nextBytes(value);
        region.put(bytes("key" + i), value);
        model.put("key" + i, value);
      }
      region.delete(bytes("key7"));
      model.remove("key7");
      assertThat(region.get(bytes("key7"))).isNull();
      assertThat(region.get(bytes("key8"))).isEqualTo(model.get("key8"));
      region.sync();
      assertThat(region.stats().puts()).isEqualTo(500);
      assertThat(region.stats().largeLogBytes()).isPositive();
    }
    try (Engine engine = open()) {
      Region region = engine.openRegion("users");
      for (Map.Entry<String, byte[]> entry : model.entrySet()) {
        assertThat(region.get(bytes(entry.getKey()))).isEqualTo(entry.getValue());
      }
      assertThat(region.get(bytes("key7"))).isNull();
    }
  }

  @Test
  void directBuffersAreReadAndFilledInPlace() {
    try (Engine engine = open()) {
      Region region = engine.createRegion("direct");
      ByteBuffer key = ByteBuffer.allocateDirect(16).put(bytes("k\0\u00ff")).flip();
      ByteBuffer value = ByteBuffer.allocateDirect(2000);
      for (int i = 0; i < 2000; i++) {
        value.put((byte) i);
      }
      value.flip();
      region.put(key, value);
      assertThat(key.position()).isZero();

      ByteBuffer small = ByteBuffer.allocateDirect(100);
      assertThat(region.get(key, small)).isEqualTo(2000);
      assertThat(small.position()).isZero(); // did not fit: nothing copied
      ByteBuffer large = ByteBuffer.allocateDirect(4000);
      assertThat(region.get(key, large)).isEqualTo(2000);
      assertThat(large.position()).isEqualTo(2000);
      large.flip();
      assertThat(large).isEqualTo(value);
      assertThat(region.get(ByteBuffer.allocateDirect(3).put(bytes("no!")).flip(), large))
          .isEqualTo(-1);
      // Heap buffers work through the array path.
      region.put(ByteBuffer.wrap(bytes("heap")), ByteBuffer.wrap(bytes("value")));
      assertThat(region.get(bytes("heap"))).isEqualTo(bytes("value"));
    }
  }

  @Test
  void everyErrorPathHasATypedException() {
    try (Engine engine = open()) {
      Region region = engine.createRegion("errors");
      assertThatThrownBy(() -> region.put(new byte[Region.MAX_KEY_BYTES + 1], new byte[1]))
          .isInstanceOfSatisfying(
              InvalidRequestException.class,
              e -> assertThat(e.status()).isEqualTo(StatusCode.TOO_LARGE))
          .hasMessageContaining("4096");
      assertThatThrownBy(() -> region.put(bytes("k"), new byte[Region.MAX_VALUE_BYTES + 1]))
          .isInstanceOfSatisfying(
              InvalidRequestException.class,
              e -> assertThat(e.status()).isEqualTo(StatusCode.TOO_LARGE));
      assertThatThrownBy(() -> region.get(new byte[0]))
          .isInstanceOfSatisfying(
              InvalidRequestException.class,
              e -> assertThat(e.status()).isEqualTo(StatusCode.INVALID_ARGUMENT));
      region.put(new byte[Region.MAX_KEY_BYTES], new byte[Region.MAX_VALUE_BYTES]);
      assertThat(region.get(new byte[Region.MAX_KEY_BYTES])).hasSize(Region.MAX_VALUE_BYTES);

      // Errors raised by the native side.
      assertThatThrownBy(() -> engine.createRegion("errors"))
          .isInstanceOf(InvalidRequestException.class)
          .hasMessageContaining("already exists");
      assertThatThrownBy(() -> engine.openRegion("missing"))
          .isInstanceOfSatisfying(
              KvsException.class, e -> assertThat(e.status()).isEqualTo(StatusCode.NOT_FOUND))
          .hasMessageContaining("missing");

      region.close();
      assertThatThrownBy(() -> region.get(bytes("k"))).isInstanceOf(ClosedException.class);
    }
  }

  @Test
  void closedEngineRefusesEveryCall() {
    Engine engine = open();
    Region region = engine.createRegion("r");
    engine.close();
    engine.close(); // idempotent
    assertThatThrownBy(() -> region.put(bytes("k"), bytes("v")))
        .isInstanceOf(ClosedException.class);
    assertThatThrownBy(() -> engine.openRegion("r")).isInstanceOf(ClosedException.class);
  }

  @Test
  void droppedRegionsAreGoneAndTheirNamesReusable() {
    try (Engine engine = open()) {
      Region region = engine.createRegion("temp");
      region.put(bytes("k"), bytes("v"));
      engine.dropRegion("temp");
      assertThatThrownBy(() -> region.get(bytes("k"))).isInstanceOf(ClosedException.class);
      assertThatThrownBy(() -> engine.openRegion("temp"))
          .isInstanceOfSatisfying(
              KvsException.class, e -> assertThat(e.status()).isEqualTo(StatusCode.NOT_FOUND));
      Region again = engine.createRegion("temp");
      assertThat(again.get(bytes("k"))).isNull();
    }
  }

  @Test
  void aSplitRegionBecomesTwoThatServeItsHalves() {
    try (Engine engine = open()) {
      Region parent = engine.createRegion("parent");
      for (int i = 0; i < 100; i++) {
        parent.put(bytes(String.format("k%03d", i)), bytes("v" + i));
      }
      assertThatThrownBy(() -> engine.splitRegion("parent", bytes("k050"), "low", "low"))
          .isInstanceOf(InvalidRequestException.class);
      engine.splitRegion("parent", bytes("k050"), "low", "high");
      assertThatThrownBy(() -> parent.get(bytes("k001"))).isInstanceOf(ClosedException.class);
      assertThatThrownBy(() -> engine.openRegion("parent"))
          .isInstanceOfSatisfying(
              KvsException.class, e -> assertThat(e.status()).isEqualTo(StatusCode.NOT_FOUND));
      Region low = engine.openRegion("low");
      Region high = engine.openRegion("high");
      assertThat(low.get(bytes("k049"))).isEqualTo(bytes("v49"));
      assertThat(low.get(bytes("k050"))).isNull();
      assertThat(high.get(bytes("k050"))).isEqualTo(bytes("v50"));
      assertThat(high.get(bytes("k049"))).isNull();
      assertThatThrownBy(() -> high.put(bytes("k001"), bytes("x")))
          .isInstanceOf(InvalidRequestException.class);
      assertThatThrownBy(() -> engine.splitRegion("high", bytes("k010"), "a", "b"))
          .isInstanceOf(InvalidRequestException.class);
    }
  }

  @Test
  void mergeAheadMovesTheWritesIntoTheLevelsSoAReopenReplaysNone() {
    try (Engine engine = open()) {
      Region region = engine.createRegion("r");
      for (int i = 0; i < 1_000; i++) {
        region.put(bytes(String.format("k%04d", i)), bytes("v" + i));
      }
      assertThat(region.stats().l0KvBytes()).isPositive();
      assertThat(region.stats().levelKvBytes()).isZero();
      assertThat(region.mergeAhead(30_000)).isTrue();
      RegionStats merged = region.stats();
      assertThat(merged.l0KvBytes()).isZero();
      assertThat(merged.levelKvBytes()).isPositive();
      assertThat(region.get(bytes("k0999"))).isEqualTo(bytes("v999"));
      assertThatThrownBy(() -> region.mergeAhead(-1)).isInstanceOf(IllegalArgumentException.class);
    }
    try (Engine engine = open()) {
      Region region = engine.openRegion("r");
      assertThat(region.stats().recovery().replayedWrites()).isZero();
      assertThat(region.get(bytes("k0000"))).isEqualTo(bytes("v0"));
    }
  }

  @Test
  void aFileThatIsNoVolumeIsRefused() throws Exception {
    Path file = directory.resolve("not-a-volume");
    Files.write(file, new byte[64 * 1024]);
    assertThatThrownBy(
            () -> Engine.open(file, EngineOptions.builder().createIfMissing(false).build()))
        .isInstanceOfSatisfying(
            KvsException.class, e -> assertThat(e.status()).isEqualTo(StatusCode.NOT_FOUND));
  }

  @Test
  void iteratorsScanInOrderWithinBoundsAndCloseWithTheirRegion() {
    java.util.TreeMap<String, String> model = new java.util.TreeMap<>();
    try (Engine engine =
        Engine.open(
            directory.resolve("volume"), EngineOptions.builder().l0SizeBytes(1 << 20).build())) {
      Region region = engine.createRegion("scan");
      Random random = new Random(3);
      // About 8 MiB through a 1 MiB L0: the third switch waits for the first
      // compaction, so at least one has finished when the loop ends.
      for (int i = 0; i < 60000; i++) {
        String key = String.format("key%05d", random.nextInt(8000));
        if (random.nextInt(6) == 0) {
          region.delete(bytes(key));
          model.remove(key);
        } else {
          String value = "v" + i + "x".repeat(random.nextInt(200));
          region.put(bytes(key), bytes(value));
          model.put(key, value);
        }
      }
      assertThat(region.stats().compactions()).isPositive();
      try (RegionIterator it = region.newIterator(bytes("key05000"))) {
        java.util.List<String> seen = new java.util.ArrayList<>();
        for (it.seek(bytes("key01000")); it.isValid(); it.next()) {
          String key = new String(it.key(), StandardCharsets.UTF_8);
          assertThat(new String(it.value(), StandardCharsets.UTF_8)).isEqualTo(model.get(key));
          seen.add(key);
        }
        assertThat(seen).containsExactlyElementsOf(model.subMap("key01000", "key05000").keySet());
        assertThatThrownBy(it::key).isInstanceOf(IllegalStateException.class);
      }
      RegionIterator open = region.newIterator(null);
      open.seekToFirst();
      assertThat(open.isValid()).isTrue();
      region.close();
      assertThatThrownBy(open::seekToFirst).isInstanceOf(ClosedException.class);
    }
  }

  @Test
  void optionsValidateTheirArguments() {
    assertThatThrownBy(() -> EngineOptions.builder().growthFactor(1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> EngineOptions.builder().l0SizeBytes(1000))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> EngineOptions.builder().kvSizeThresholds(200, 100))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(EngineOptions.defaults().growthFactor()).isEqualTo(8);
  }
}
