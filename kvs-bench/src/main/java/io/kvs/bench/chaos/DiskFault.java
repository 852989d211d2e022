package io.kvs.bench.chaos;

import io.kvs.client.KvsClient;
import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.tools.fault.LoopDisk;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
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
  private static final Duration REFUSAL_WAIT = Duration.ofSeconds(120);
  private static final long REFUSAL_BYTES_MAX = 8L << 30;
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
    try (KvsClient eater = cluster.client(EATER_TIMEOUT)) {
      long started = System.nanoTime();
      long written = 0;
      String last = "none";
      String refusal = null;
      for (int i = 0; refusal == null; i++) {
        byte[] key = eaterKey(region, i);
        if (System.nanoTime() - started > REFUSAL_WAIT.toNanos() || written > REFUSAL_BYTES_MAX) {
          record.error(
              String.format(
                  Locale.ROOT,
                  "%s refused no write for lack of space within %d s (%d MiB written; last error:"
                      + " %s)",
                  victim,
                  REFUSAL_WAIT.toSeconds(),
                  written >> 20,
                  last));
          break;
        }
        try {
          eater.put(key, value);
          keys.add(key);
          written += value.length;
        } catch (RuntimeException e) {
          last = String.valueOf(e.getMessage());
          String lower = last.toLowerCase(Locale.ROOT);
          if (lower.contains("no space left") || lower.contains("volume full")) {
            refusal = last;
          }
        }
      }
      if (refusal != null) {
        record.note(
            String.format(
                Locale.ROOT,
                "refused after %d MiB in %d ms: %s",
                written >> 20,
                (System.nanoTime() - started) / 1_000_000,
                refusal));
      }
    }
    return () -> heal(filler, eaterKey(region, -1), keys, value, record);
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
