package io.kvs.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.ClosedException;
import java.lang.ref.WeakReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java API cannot crash the JVM or lose an acknowledged write through the lifetime of its
 * handles: a region keeps its engine open, a closed engine refuses every call, and a forgotten one
 * is closed (and synced) by its cleaner only once nothing can call into it.
 */
class EngineLifetimeTest {
  /** Rounds of {@link System#gc()} a test waits for a collection to happen. */
  private static final int GC_ROUNDS_MAX = 200;

  @TempDir Path directory;

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private Path volume() {
    return directory.resolve("volume");
  }

  /** Opens an engine and returns only a region of it (and a weak reference to the engine). */
  private Region regionOnly(String name, WeakReference<?>[] engineReference) {
    Engine engine = Engine.open(volume(), EngineOptions.defaults());
    engineReference[0] = new WeakReference<>(engine);
    return engine.createRegion(name);
  }

  @Test
  void aRegionAloneKeepsItsEngineOpenThroughGarbageCollection() {
    WeakReference<?>[] engineReference = new WeakReference<?>[1];
    Region region = regionOnly("kept", engineReference);
    byte[] value = new byte[2000]; // large values: the large log, read back from it
    for (int i = 0; i < 50; i++) {
      System.gc();
      value[0] = (byte) i;
      region.put(bytes("key" + i), value);
      assertThat(region.get(bytes("key" + i))).isEqualTo(value);
    }
    // Collections ran, yet the engine is still reachable through the region.
    assertThat(engineReference[0].get()).isNotNull();
    region.engine().close();
    try (Engine engine = Engine.open(volume(), EngineOptions.defaults())) {
      Region reopened = engine.openRegion("kept");
      assertThat(reopened.get(bytes("key49"))).isEqualTo(value);
      assertThat(reopened.stats().recovery().droppedWrites()).isZero();
    }
  }

  @Test
  void everyCallAfterCloseThrowsAndNoWriteSucceeds() {
    Engine engine = Engine.open(volume(), EngineOptions.defaults());
    Region region = engine.createRegion("closed");
    region.put(bytes("before"), bytes("v"));
    RegionIterator iterator = region.newIterator(null);
    engine.close();
    assertThatThrownBy(() -> region.put(bytes("after"), bytes("v")))
        .isInstanceOf(ClosedException.class);
    assertThatThrownBy(() -> region.delete(bytes("before"))).isInstanceOf(ClosedException.class);
    assertThatThrownBy(() -> region.get(bytes("before"))).isInstanceOf(ClosedException.class);
    assertThatThrownBy(region::sync).isInstanceOf(ClosedException.class);
    assertThatThrownBy(region::stats).isInstanceOf(ClosedException.class);
    assertThatThrownBy(() -> region.newIterator(null)).isInstanceOf(ClosedException.class);
    assertThatThrownBy(iterator::seekToFirst).isInstanceOf(ClosedException.class);
    assertThatThrownBy(() -> engine.openRegion("closed")).isInstanceOf(ClosedException.class);
    engine.close(); // a second close is harmless
    try (Engine reopened = Engine.open(volume(), EngineOptions.defaults())) {
      Region again = reopened.openRegion("closed");
      assertThat(again.get(bytes("before"))).isEqualTo(bytes("v"));
      assertThat(again.get(bytes("after"))).isNull();
    }
  }

  @Test
  void aForgottenEngineIsClosedAndSyncedByItsCleanerOnceUnreachable() {
    WeakReference<?>[] engineReference = new WeakReference<?>[1];
    Region region = regionOnly("forgotten", engineReference);
    region.put(bytes("key"), bytes("value"));
    region = null; // the last reference to the engine goes with it
    for (int round = 0; round < GC_ROUNDS_MAX && engineReference[0].get() != null; round++) {
      System.gc();
    }
    assertThat(engineReference[0].get()).as("engine collected").isNull();
    // The cleaner closes the native engine, which releases the volume's lock; until then a second
    // open is refused with BUSY.
    Engine reopened = null;
    for (int round = 0; round < GC_ROUNDS_MAX && reopened == null; round++) {
      try {
        reopened = Engine.open(volume(), EngineOptions.defaults());
      } catch (io.kvs.core.KvsException busy) {
        assertThat(busy.status()).isEqualTo(io.kvs.core.StatusCode.BUSY);
        System.gc();
        Thread.onSpinWait();
      }
    }
    assertThat(reopened).as("volume released by the cleaner").isNotNull();
    try (Engine engine = reopened) {
      assertThat(engine.openRegion("forgotten").get(bytes("key"))).isEqualTo(bytes("value"));
    }
  }
}
