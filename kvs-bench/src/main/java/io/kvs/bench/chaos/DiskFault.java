package io.kvs.bench.chaos;

import io.kvs.client.KvsClient;
import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.tools.fault.LoopDisk;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * A full disk on a primary: its file system ({@link LoopDisk}) is filled, then the campaign writes
 * large values to new keys of its own in a region the server leads until the server refuses one for
 * lack of space (its volume first uses up the free segments it has; new keys, since values
 * overwritten become garbage the volume reclaims), and checks that the refusal says so. Healing
 * deletes the filler, checks that the server accepts writes again, and deletes the keys. The
 * recorded load meanwhile meets the same refusals (outcome unknown). The keys sort before every key
 * of the recorded load in the region (the region's start, then a zero byte), so only a scan that
 * crosses into the region from the one before meets them.
 */
final class DiskFault {
  private static final int EATER_VALUE_BYTES = 512 << 10;
  private static final Duration EATER_TIMEOUT = Duration.ofSeconds(10);
  private static final int EATER_IN_FLIGHT = 8;
  private static final long EATER_MARGIN_BYTES = 256L << 20;
  private static final Duration REFUSAL_WAIT = Duration.ofSeconds(300);
  private static final Duration RECOVERY_WAIT = Duration.ofSeconds(90);

  private final ChaosCluster cluster;
  private final Cleanup cleanup;

  DiskFault(ChaosCluster cluster, Cleanup cleanup) {
    this.cluster = cluster;
    this.cleanup = cleanup;
  }

  Faults.Active fill(PlannedFault fault, FaultRecord record) throws Exception {
    long regionId = fault.target().region();
    RegionDescriptor region = cluster.region(regionId);
    String victim = region.primary();
    if (victim.isEmpty()) {
      throw new IllegalStateException("region " + regionId + " has no primary");
    }
    LoopDisk disk = cluster.disk(victim);
    record.victim("server-" + victim);
    record.injected(System.nanoTime());
    AutoCloseable filler = cleanup.add(new Filler(disk));
    long filled = disk.fill();
    record.note(String.format(Locale.ROOT, "filler of %.1f MiB", filled / 1048576.0));
    byte[] value = new byte[EATER_VALUE_BYTES];
    Arrays.fill(value, (byte) 'x');
    List<byte[]> keys = new ArrayList<>();
    // The volume's free segments are what is left to take: at most its size.
    long volumeBytes = Files.size(disk.mountPoint().resolve("volume"));
    try (KvsClient eater = cluster.client(EATER_TIMEOUT)) {
      eat(eater, region, value, keys, volumeBytes + EATER_MARGIN_BYTES, record);
    }
    return () -> heal(filler, eaterKey(region, -1), keys, value, record);
  }

  /**
   * Writes {@code value} to new keys of {@code region}, {@link #EATER_IN_FLIGHT} at a time, until
   * the primary refuses one for lack of space (noted) or {@code bytesMax} or {@link #REFUSAL_WAIT}
   * ran out (an error: the server accepted more than its full disk could hold, or took too long).
   */
  private static void eat(
      KvsClient eater,
      RegionDescriptor region,
      byte[] value,
      List<byte[]> keys,
      long bytesMax,
      FaultRecord record)
      throws InterruptedException {
    Semaphore window = new Semaphore(EATER_IN_FLIGHT);
    AtomicReference<String> refusal = new AtomicReference<>();
    AtomicReference<String> last = new AtomicReference<>("none");
    AtomicLong written = new AtomicLong();
    long started = System.nanoTime();
    for (int i = 0; refusal.get() == null; i++) {
      if (System.nanoTime() - started > REFUSAL_WAIT.toNanos() || written.get() > bytesMax) {
        break;
      }
      window.acquire(); // each put is bounded by the client's operation timeout
      byte[] key = eaterKey(region, i);
      keys.add(key);
      eater
          .putAsync(key, value)
          .whenComplete(
              (done, failure) -> {
                if (failure == null) {
                  written.addAndGet(value.length);
                } else {
                  Throwable cause =
                      failure instanceof CompletionException && failure.getCause() != null
                          ? failure.getCause()
                          : failure;
                  String message = String.valueOf(cause.getMessage());
                  last.set(message);
                  String lower = message.toLowerCase(Locale.ROOT);
                  if (lower.contains("no space left") || lower.contains("volume full")) {
                    refusal.compareAndSet(null, message);
                  }
                }
                window.release();
              });
    }
    window.acquire(EATER_IN_FLIGHT); // every put has ended
    long millis = (System.nanoTime() - started) / 1_000_000;
    if (refusal.get() != null) {
      record.note(
          String.format(
              Locale.ROOT,
              "refused after %d MiB in %d ms: %s",
              written.get() >> 20,
              millis,
              refusal.get()));
    } else {
      record.error(
          String.format(
              Locale.ROOT,
              "%s refused no write for lack of space in %d ms (%d MiB written, its volume %d MiB;"
                  + " last error: %s)",
              region.primary(),
              millis,
              written.get() >> 20,
              (bytesMax - EATER_MARGIN_BYTES) >> 20,
              last.get()));
    }
  }

  private void heal(
      AutoCloseable filler, byte[] probe, List<byte[]> keys, byte[] value, FaultRecord record)
      throws Exception {
    cleanup.close(filler);
    long freed = System.nanoTime();
    try (KvsClient eater = cluster.client(EATER_TIMEOUT)) {
      String last = "none";
      boolean accepted = false;
      while (!accepted && System.nanoTime() - freed < RECOVERY_WAIT.toNanos()) {
        try {
          eater.put(probe, value);
          accepted = true;
        } catch (RuntimeException e) {
          last = String.valueOf(e.getMessage());
          // A bounded retry with a pause: the server recovers on its own time.
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
      }
      if (!accepted) {
        record.error(
            "writes still refused "
                + RECOVERY_WAIT.toSeconds()
                + " s after space returned; last error: "
                + last);
        return;
      }
      record.note(
          "writes accepted again "
              + (System.nanoTime() - freed) / 1_000_000
              + " ms after space returned");
      keys.add(probe);
      for (byte[] key : keys) {
        try {
          eater.delete(key);
        } catch (RuntimeException e) {
          record.note("could not delete a key of the campaign's: " + e.getMessage());
        }
      }
    }
  }

  /**
   * The campaign's key number {@code n} in {@code region}: the region's start (a zero byte for the
   * first region), a zero byte, then a name; before every recorded key of the region.
   */
  private static byte[] eaterKey(RegionDescriptor region, int n) {
    byte[] start = region.start().length == 0 ? new byte[] {0} : region.start();
    byte[] suffix = ("disk-eater-" + n).getBytes(StandardCharsets.UTF_8);
    byte[] key = Arrays.copyOf(start, start.length + 1 + suffix.length);
    System.arraycopy(suffix, 0, key, start.length + 1, suffix.length);
    if (!region.contains(key)) {
      throw new IllegalStateException(
          "region " + region.id() + " holds no key like " + Keys.print(key));
    }
    return key;
  }

  /** Deletes the filler when closed (the fault's heal, or the campaign's cleanup). */
  private record Filler(LoopDisk disk) implements AutoCloseable {
    @Override
    public void close() throws java.io.IOException {
      disk.unfill();
    }
  }
}
