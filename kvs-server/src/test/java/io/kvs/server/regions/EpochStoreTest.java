package io.kvs.server.regions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The epochs a server accepted outlive it, a raise returns only once it is on disk, and a raise
 * writes in place (no new block: a full disk must not stop it).
 */
class EpochStoreTest {
  @TempDir Path directory;

  @Test
  void raisesOutliveTheStoreAndNeverGoDown() {
    EpochStore store = new EpochStore(directory);
    assertThat(store.highest(7)).isEqualTo(-1);
    store.raise(7, 3);
    store.raise(7, 2); // lower: ignored
    store.raise(9, 1);

    EpochStore reopened = new EpochStore(directory);
    assertThat(reopened.highest(7)).isEqualTo(3);
    assertThat(reopened.highest(9)).isEqualTo(1);
    assertThat(reopened.highest(8)).isEqualTo(-1);
  }

  /**
   * Raises from several threads at once (the control lanes) are written together, yet each one is
   * in the file when it returns.
   */
  @Test
  void everyConcurrentRaiseIsOnDiskWhenItReturns() throws Exception {
    EpochStore store = new EpochStore(directory);
    int threads = 6;
    int raises = 60;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        long region = t;
        done.add(
            pool.submit(
                () -> {
                  for (long epoch = 1; epoch <= raises; epoch++) {
                    store.raise(region, epoch);
                    assertThat(new EpochStore(directory).highest(region))
                        .as("region %d on disk after raising it to %d", region, epoch)
                        .isGreaterThanOrEqualTo(epoch);
                  }
                  return null;
                }));
      }
      for (Future<?> each : done) {
        each.get();
      }
    } finally {
      pool.shutdownNow();
    }
    EpochStore reopened = new EpochStore(directory);
    for (long region = 0; region < threads; region++) {
      assertThat(reopened.highest(region)).isEqualTo(raises);
    }
  }

  /** Raises rewrite the file in place: same size, same inode, nothing else made beside it. */
  @Test
  void raisesWriteInPlace() throws Exception {
    EpochStore store = new EpochStore(directory);
    Path file = directory.resolve(EpochStore.FILE);
    long size = Files.size(file);
    Object inode = Files.getAttribute(file, "unix:ino");
    for (long region = 0; region < EpochStore.INITIAL_CAPACITY; region++) {
      store.raise(region, region + 1);
    }
    assertThat(Files.size(file)).isEqualTo(size);
    assertThat(Files.getAttribute(file, "unix:ino")).isEqualTo(inode);
    try (var listing = Files.list(directory)) {
      assertThat(listing).containsExactly(file);
    }
    EpochStore reopened = new EpochStore(directory);
    assertThat(reopened.highest(EpochStore.INITIAL_CAPACITY - 1))
        .isEqualTo(EpochStore.INITIAL_CAPACITY);
  }

  /** Past its capacity the file is made anew at twice the size, holding every raise. */
  @Test
  void aStoreThatOutgrowsItsSlotsGrows() {
    EpochStore store = new EpochStore(directory);
    int regions = 3 * EpochStore.INITIAL_CAPACITY;
    for (long region = 0; region < regions; region++) {
      store.raise(region, 5);
    }
    store.raise(1, 6);
    EpochStore reopened = new EpochStore(directory);
    assertThat(reopened.highest(regions - 1)).isEqualTo(5);
    assertThat(reopened.highest(1)).isEqualTo(6);
  }

  /**
   * A write torn by a crash (the slot being written is garbage) leaves the copy before it; the next
   * raise goes to the same slot again.
   */
  @Test
  void aTornWriteLeavesTheCopyBeforeIt() throws Exception {
    EpochStore store = new EpochStore(directory);
    store.raise(7, 3);
    store.raise(7, 4); // sequence 2: slot 0; sequence 1 (epoch 3) is in slot 1
    Path file = directory.resolve(EpochStore.FILE);
    long slot = Files.size(file) / 2;
    try (FileChannel out = FileChannel.open(file, StandardOpenOption.WRITE)) {
      out.write(java.nio.ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5, 6, 7}), 20); // slot 0 torn
    }
    EpochStore reopened = new EpochStore(directory);
    assertThat(reopened.highest(7)).as("the copy before the torn write").isEqualTo(3);
    reopened.raise(7, 9);
    assertThat(new EpochStore(directory).highest(7)).isEqualTo(9);

    try (FileChannel out = FileChannel.open(file, StandardOpenOption.WRITE)) {
      out.write(java.nio.ByteBuffer.wrap(new byte[] {9, 9, 9}), 20);
      out.write(java.nio.ByteBuffer.wrap(new byte[] {9, 9, 9}), slot + 20);
    }
    assertThatThrownBy(() -> new EpochStore(directory))
        .as("both slots corrupt: the server must not start knowing no epoch")
        .isInstanceOf(UncheckedIOException.class)
        .hasMessageContaining(EpochStore.FILE)
        .hasRootCauseMessage("corrupt epoch store: neither of its two slots passes its checksum");
  }

  /** A server that stored its epochs in the older properties file keeps them. */
  @Test
  void theOlderPropertiesFileIsTakenOver() throws Exception {
    Files.writeString(
        directory.resolve("epochs.properties"),
        "# highest epoch accepted per region\n4=17\n12=3\n");
    EpochStore store = new EpochStore(directory);
    assertThat(store.highest(4)).isEqualTo(17);
    assertThat(directory.resolve("epochs.properties")).doesNotExist();
    store.raise(12, 4);
    EpochStore reopened = new EpochStore(directory);
    assertThat(reopened.highest(4)).isEqualTo(17);
    assertThat(reopened.highest(12)).isEqualTo(4);
  }
}
