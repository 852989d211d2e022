package io.kvs.server.regions;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The epochs a server accepted outlive it, and a raise returns only once it is on disk. */
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
}
