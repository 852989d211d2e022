package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.History;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.Verdict;
import io.kvs.client.KvsClient;
import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.security.SecurityOptions;
import io.kvs.tools.ClusterTarget;
import io.kvs.tools.admin.Admin;
import io.kvs.tools.fault.LoopDisk;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * A region server whose disk is full (issue 25): server s1's directory is a small file system of
 * its own ({@link LoopDisk}), three servers hold three regions at replication 2 (1 MiB L0s, data in
 * the device levels) under a recorded pipelined load over every region. The file system is filled,
 * then large values are written to a region s1 leads until s1 refuses one for lack of space.
 * Checked: the refusals come within the client's operation timeout and say the disk is full; s1
 * still serves reads of that region; every region s1 does not lead takes writes (more than s1's
 * volume has free, so a region whose backup s1 is needs room on s1 or a group without it); s1
 * neither crashes nor restarts; s1's region is handed over to its backup while the disk is full (s1
 * stores the new epoch in place); once the filler is deleted, s1 catches up, takes its region back,
 * and it takes writes again; afterwards every group is whole, the history is linearizable with no
 * acknowledged write lost, and {@code LocalCluster verify} finds every backup holding what its
 * primary holds.
 */
class FullDiskIT {
  private static final String FULL = "s1";
  private static final int SERVERS = 3;
  private static final int REGIONS = 3;
  private static final int REPLICATION = 2;
  private static final long DISK_BYTES = 256L << 20;
  private static final int CLIENTS = 2;
  private static final int DEPTH = 8;
  private static final int KEYS = 128;
  private static final int EATER_VALUE_BYTES = 512 << 10;
  private static final int EATER_IN_FLIGHT = 8;
  private static final int REFUSALS_IN_A_ROW = 8;

  /** What each other region must take while s1's disk is full: more than s1's volume has free. */
  private static final int OTHERS_BYTES = 48 << 20;

  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration REFUSAL_WAIT = Duration.ofSeconds(60);
  private static final Duration RECOVERY_WAIT = Duration.ofSeconds(60);
  private static final Duration AWAIT = Duration.ofSeconds(120);

  /**
   * How long a region s1 does not lead may refuse writes after the disk filled: one whose backup is
   * s1 waits until that backup's stream stalls (2 s) and the master reopens the group without it.
   */
  private static final Duration OTHERS_WAIT = Duration.ofSeconds(30);

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  static Path dir;

  @Test
  void aServerWhoseDiskIsFullRefusesWritesClearlyAndTakesThemAgainOnceSpaceReturns()
      throws Exception {
    long started = System.nanoTime();
    Path clusterDir = dir.resolve("cluster");
    HistoryRecorder recorder = new HistoryRecorder(1 << 20);
    PipelinedLoad load;
    try (LoopDisk disk =
            LoopDisk.create(
                dir.resolve(FULL + ".img"),
                clusterDir.resolve("servers").resolve(FULL),
                DISK_BYTES);
        ProcessCluster cluster =
            ProcessCluster.start(
                clusterDir,
                "--servers",
                Integer.toString(SERVERS),
                "--regions",
                Integer.toString(REGIONS),
                "--replication",
                Integer.toString(REPLICATION),
                "--l0-size",
                ProcessCluster.SMALL_L0);
        KvsClient client = cluster.client(OPERATION_TIMEOUT)) {
      ProcessCluster.awaitFullStrength(client, REGIONS, REPLICATION, AWAIT);
      long pid = cluster.process("server-" + FULL).pid();
      // The bootstrap may open every region before FULL registers; the balancer then hands it its
      // share (a cluster in balance makes no further moves).
      ProcessCluster.awaitCondition(
          FULL + " leading a region; map: " + client.regionMap().regions(),
          AWAIT,
          () ->
              client.regionMap().regions().stream()
                  .anyMatch(region -> region.primary().equals(FULL) && region.joining().isEmpty()));
      RegionDescriptor led =
          client.regionMap().regions().stream()
              .filter(region -> region.primary().equals(FULL))
              .findFirst()
              .orElseThrow(() -> new AssertionError(FULL + " leads no region"));
      Bulk.fillLevels(client, "bulk", REGIONS);
      List<KvsClient> clients = new ArrayList<>();
      try {
        for (int i = 0; i < CLIENTS; i++) {
          clients.add(cluster.client(OPERATION_TIMEOUT));
        }
        load = PipelinedLoad.start(clients, recorder, "load", KEYS, DEPTH, new TreeMap<>());
        load.awaitMoreWrites(200, AWAIT);
        progress(started, "cluster up, levels filled, load running; " + FULL + " leads " + led);

        long filler = disk.fill();
        progress(
            started,
            String.format(
                Locale.ROOT,
                "filler of %d MiB, %d KiB free, volume %d MiB",
                filler >> 20,
                disk.freeBytes() >> 10,
                Files.size(disk.mountPoint().resolve("volume")) >> 20));
        List<byte[]> eaten = new ArrayList<>();
        String refusal = eat(client, led, eaten, started);
        assertThat(refusal.toLowerCase(Locale.ROOT))
            .as("what the full server answered")
            .containsAnyOf("no space left on device", "volume full");

        // Full: s1 still serves reads of its region, and every other region takes writes.
        assertThat(client.get(eaten.get(0))).as("a read of " + FULL + "'s region").isPresent();
        for (RegionDescriptor region : client.regionMap().regions()) {
          if (region.id() != led.id()) {
            long took = awaitWritable(client, region, OTHERS_WAIT);
            String bulk = writeMuch(client, region, OTHERS_WAIT);
            progress(
                started,
                "region "
                    + region.id()
                    + " ("
                    + region.primary()
                    + ", backups "
                    + region.backups()
                    + ") writable after "
                    + took
                    + " ms; "
                    + bulk
                    + "; now "
                    + cluster.regionMap().byId(region.id()).orElseThrow());
          }
        }
        assertThat(cluster.process("server-" + FULL).pid())
            .as(FULL + " is the process that started (it neither crashed nor restarted)")
            .isEqualTo(pid);

        // A handover while the disk is full: s1 must store the region's new epoch.
        ClusterTarget target = new ClusterTarget(cluster.zookeeper(), "default");
        SecurityOptions security = SecurityOptions.forClusterDirectory(cluster.dir(), "admin");
        String successor = cluster.regionMap().byId(led.id()).orElseThrow().backupsInSync().get(0);
        try (Admin admin = Admin.connect(target, security, AWAIT)) {
          long begun = System.nanoTime();
          admin.requestMove(led.id(), successor);
          assertThat(admin.awaitMove(led.id(), successor, OTHERS_WAIT))
              .as("the handover of region " + led.id() + " from " + FULL + " (disk full)")
              .isNull();
          long took = awaitWritable(client, led, OTHERS_WAIT);
          progress(
              started,
              "region "
                  + led.id()
                  + " handed over to "
                  + successor
                  + " in "
                  + (System.nanoTime() - begun) / 1_000_000
                  + " ms, writable "
                  + took
                  + " ms later; now "
                  + cluster.regionMap().byId(led.id()).orElseThrow());
          assertThat(client.get(eaten.get(0))).as("a read of region " + led.id()).isPresent();

          // Space returns: s1 catches up and takes its region back.
          disk.unfill();
          ProcessCluster.awaitCondition(
              FULL + " in sync in region " + led.id(),
              RECOVERY_WAIT,
              () -> {
                try {
                  return cluster
                      .regionMap()
                      .byId(led.id())
                      .orElseThrow()
                      .backupsInSync()
                      .contains(FULL);
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
          admin.requestMove(led.id(), FULL);
          assertThat(admin.awaitMove(led.id(), FULL, RECOVERY_WAIT))
              .as("the handover of region " + led.id() + " back to " + FULL)
              .isNull();
        }
        long recovered = awaitWritable(client, led, RECOVERY_WAIT);
        progress(
            started,
            "filler deleted; " + FULL + " leads again and took a write after " + recovered + " ms");
        for (byte[] key : eaten) {
          client.delete(key);
        }
        load.awaitMoreWrites(200, AWAIT);
        load.stop(OPERATION_TIMEOUT.multipliedBy(2));
      } finally {
        for (KvsClient each : clients) {
          each.close();
        }
      }
      long healing = System.nanoTime();
      ProcessCluster.awaitFullStrength(client, REGIONS, REPLICATION, AWAIT);
      progress(
          started,
          "every group whole again " + (System.nanoTime() - healing) / 1_000_000 + " ms later");
      load.finalReads(client, CLIENTS);
      cluster.verify();
      assertThat(cluster.process("server-" + FULL).pid())
          .as(FULL + " is the process that started (it neither crashed nor restarted)")
          .isEqualTo(pid);
      progress(started, "verified");
    }
    History history = recorder.history();
    Verdict verdict = RecordedLoad.check(history, dir.resolve("history-full-disk.jsonl"));
    assertThat(verdict.isLinearizable()).as(verdict.describe()).isTrue();
    assertThat(verdict.lostWrites()).isEmpty();
    System.out.printf(
        "FullDiskIT: %d operations recorded, %d writes acknowledged, %d operations failed %s; %s%n",
        history.size(),
        load.writesAcknowledged(),
        load.failed(),
        load.failures(),
        verdict.summary());
  }

  /**
   * Writes large values to new keys of {@code region} ({@link #EATER_IN_FLIGHT} at a time) until
   * its primary refused {@link #REFUSALS_IN_A_ROW} in a row for lack of space (space a compaction
   * frees may let one through meanwhile); returns what the last refused one was told. Fails if that
   * takes longer than {@link #REFUSAL_WAIT}, if a write fails otherwise, or if one took longer than
   * the operation timeout.
   */
  private static String eat(KvsClient client, RegionDescriptor region, List<byte[]> keys, long t0)
      throws InterruptedException {
    byte[] value = new byte[EATER_VALUE_BYTES];
    Arrays.fill(value, (byte) 'x');
    Semaphore window = new Semaphore(EATER_IN_FLIGHT);
    AtomicReference<String> refusal = new AtomicReference<>();
    AtomicInteger inARow = new AtomicInteger();
    AtomicInteger refusals = new AtomicInteger();
    AtomicInteger mostInARow = new AtomicInteger();
    AtomicReference<String> other = new AtomicReference<>();
    AtomicLong written = new AtomicLong();
    AtomicLong slowest = new AtomicLong();
    long started = System.nanoTime();
    for (int i = 0; inARow.get() < REFUSALS_IN_A_ROW && other.get() == null; i++) {
      assertThat(Duration.ofNanos(System.nanoTime() - started))
          .as(
              "time to "
                  + REFUSALS_IN_A_ROW
                  + " refusals in a row for lack of space ("
                  + (written.get() >> 20)
                  + " MiB written to region "
                  + region.id()
                  + ", "
                  + refusals.get()
                  + " refused)")
          .isLessThan(REFUSAL_WAIT);
      window.acquire(); // each put is bounded by the client's operation timeout
      byte[] key = keyIn(region, "eater", i);
      long begun = System.nanoTime();
      client
          .putAsync(key, value)
          .whenComplete(
              (done, failure) -> {
                slowest.accumulateAndGet(System.nanoTime() - begun, Math::max);
                if (failure == null) {
                  synchronized (keys) {
                    keys.add(key);
                  }
                  written.addAndGet(value.length);
                  inARow.set(0);
                } else {
                  String message = String.valueOf(unwrap(failure).getMessage());
                  String lower = message.toLowerCase(Locale.ROOT);
                  if (lower.contains("no space left") || lower.contains("volume full")) {
                    refusal.set(message);
                    refusals.incrementAndGet();
                    mostInARow.accumulateAndGet(inARow.incrementAndGet(), Math::max);
                  } else {
                    other.compareAndSet(null, unwrap(failure).toString());
                  }
                }
                window.release();
              });
    }
    window.acquire(EATER_IN_FLIGHT); // every put has ended
    assertThat(other.get()).as("a write that failed other than for lack of space").isNull();
    progress(
        t0,
        String.format(
            Locale.ROOT,
            "%d refused (at most %d in a row) after %d MiB in %d ms (slowest put %d ms): %s",
            refusals.get(),
            mostInARow.get(),
            written.get() >> 20,
            (System.nanoTime() - started) / 1_000_000,
            slowest.get() / 1_000_000,
            refusal.get()));
    assertThat(Duration.ofNanos(slowest.get()))
        .as("the slowest put while the disk filled")
        .isLessThan(OPERATION_TIMEOUT);
    return refusal.get();
  }

  /**
   * Writes {@link #OTHERS_BYTES} of large values to new keys of {@code region}, one at a time,
   * retrying a failed one until {@code timeout} has passed since the first; what it took.
   */
  private static String writeMuch(KvsClient client, RegionDescriptor region, Duration timeout)
      throws InterruptedException {
    byte[] value = new byte[EATER_VALUE_BYTES];
    Arrays.fill(value, (byte) 'o');
    long begun = System.nanoTime();
    int failures = 0;
    String last = "none";
    for (int i = 0; i < OTHERS_BYTES / EATER_VALUE_BYTES; i++) {
      byte[] key = keyIn(region, "other", i);
      String failed;
      while ((failed = refused(client, key, value)) != null) {
        failures++;
        last = failed;
        if (System.nanoTime() - begun > timeout.toNanos()) {
          throw new AssertionError(
              "region "
                  + region.id()
                  + " took "
                  + i
                  + " large values, then none for "
                  + timeout
                  + "; last error: "
                  + last);
        }
        Thread.sleep(100); // a bounded retry: the cluster recovers on its own time
      }
    }
    return String.format(
        Locale.ROOT,
        "%d MiB more in %d ms, %d failed attempts%s",
        OTHERS_BYTES >> 20,
        (System.nanoTime() - begun) / 1_000_000,
        failures,
        failures == 0 ? "" : " (last: " + last + ")");
  }

  /** The message of the failure a put of {@code key} met, or null if it succeeded. */
  private static String refused(KvsClient client, byte[] key, byte[] value) {
    try {
      client.put(key, value);
      return null;
    } catch (RuntimeException e) {
      return String.valueOf(unwrap(e).getMessage());
    }
  }

  /**
   * Writes a probe to {@code region} until one succeeds, within {@code timeout}; the milliseconds
   * it took.
   */
  private static long awaitWritable(KvsClient client, RegionDescriptor region, Duration timeout)
      throws InterruptedException {
    long begun = System.nanoTime();
    byte[] key = keyIn(region, "writable", 0);
    String last = "none";
    while (System.nanoTime() - begun < timeout.toNanos()) {
      String failed = refused(client, key, ("at " + System.nanoTime()).getBytes());
      if (failed == null) {
        return (System.nanoTime() - begun) / 1_000_000;
      }
      last = failed;
      Thread.sleep(100); // a bounded retry: the cluster recovers on its own time
    }
    throw new AssertionError(
        "region " + region.id() + " took no write within " + timeout + "; last error: " + last);
  }

  /** Key {@code n} of the set {@code name} among those {@code region} holds. */
  private static byte[] keyIn(RegionDescriptor region, String name, int n) {
    for (int i = 0, found = 0; ; i++) {
      byte[] key = TestKeys.key(name + "-" + region.id(), i);
      if (region.contains(key) && found++ == n) {
        return key;
      }
      if (i > 1_000_000) {
        throw new IllegalStateException("region " + region.id() + " holds no " + Keys.print(key));
      }
    }
  }

  private static Throwable unwrap(Throwable error) {
    return error instanceof CompletionException && error.getCause() != null
        ? error.getCause()
        : error;
  }

  private static void progress(long started, String what) {
    System.out.printf("FullDiskIT: %5.1f s: %s%n", (System.nanoTime() - started) / 1e9, what);
  }
}
