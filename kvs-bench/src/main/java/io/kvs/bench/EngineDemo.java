package io.kvs.bench;

import io.kvs.engine.Engine;
import io.kvs.engine.EngineOptions;
import io.kvs.engine.Region;
import io.kvs.engine.RegionIterator;
import io.kvs.engine.RegionStats;
import io.kvs.nativelib.NativeLibrary;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;

/**
 * What {@code ./kvs demo} runs while the cluster does not exist yet: the storage engine in process.
 * Writes a mixed workload (small, medium and large KV pairs, overwrites, deletes) into a volume
 * file, reads every key back, scans a range, closes, reopens (recovering from the logs and levels),
 * and checks everything again. Exits with status 1 if any check fails.
 *
 * <p>Arguments: {@code [volume-path [operations]]}; defaults {@code target/demo/volume} and 200000.
 */
public final class EngineDemo {
  private static final int KEYS = 50_000;

  private EngineDemo() {}

  /** Runs the demo. */
  public static void main(String[] args) throws Exception {
    Path volume = Paths.get(args.length > 0 ? args[0] : "target/demo/volume");
    int operations = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
    Files.createDirectories(volume.toAbsolutePath().getParent());
    Files.deleteIfExists(volume);

    NativeLibrary.load();
    System.out.println("KVS storage engine demo");
    System.out.println("  native   " + NativeLibrary.buildInfo());
    System.out.println("  volume   " + volume.toAbsolutePath());

    EngineOptions options = EngineOptions.builder().l0SizeBytes(8L << 20).build();
    byte[][] model = new byte[KEYS][];
    Random random = new Random(42);
    long start = System.nanoTime();
    long bytes = 0;
    try (Engine engine = Engine.open(volume, options)) {
      Region region = engine.createRegion("demo");
      for (int i = 0; i < operations; i++) {
        int key = random.nextInt(KEYS);
        if (random.nextInt(10) == 0) {
          region.delete(key(key));
          model[key] = null;
        } else {
          byte[] value = value(random, i);
          region.put(key(key), value);
          model[key] = value;
          bytes += value.length;
        }
      }
      region.sync();
      double seconds = (System.nanoTime() - start) / 1e9;
      System.out.printf(
          Locale.ROOT,
          "%n  wrote    %,d operations (%,.1f MiB of values) in %.2f s: %,.0f ops/s%n",
          operations,
          bytes / 1048576.0,
          seconds,
          operations / seconds);
      printStats(region.stats());
      check("read back every key", region, model);
      checkScan(region, model);
    }
    try (Engine engine = Engine.open(volume, options)) {
      Region region = engine.openRegion("demo");
      System.out.println("\n  reopened the volume: the region recovered from its levels and logs");
      check("read back every key after reopening", region, model);
    }
    System.out.println(
        "\nThe cluster (master, region servers, client) arrives with later issues; see README.md.");
  }

  private static byte[] key(int key) {
    return String.format(Locale.ROOT, "user%08d", key).getBytes(StandardCharsets.UTF_8);
  }

  /** 60% small, 20% medium, 20% large values (the SD mix of the design brief). */
  private static byte[] value(Random random, int sequence) {
    int draw = random.nextInt(10);
    int size = draw < 6 ? 9 : draw < 8 ? 99 : 999;
    byte[] value = new byte[size];
    Arrays.fill(value, (byte) ('a' + sequence % 26));
    return value;
  }

  private static void printStats(RegionStats stats) {
    System.out.printf(
        Locale.ROOT,
        "  engine   %d compactions, %d device levels (%,.1f MiB), L0 %,.1f MiB, %d write stalls%n",
        stats.compactions(),
        stats.levelCount(),
        stats.levelKvBytes() / 1048576.0,
        stats.l0Bytes() / 1048576.0,
        stats.stalls());
  }

  private static void check(String what, Region region, byte[][] model) {
    int wrong = 0;
    long start = System.nanoTime();
    for (int key = 0; key < KEYS; key++) {
      if (!Arrays.equals(region.get(key(key)), model[key])) {
        wrong++;
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    System.out.printf(
        Locale.ROOT,
        "  check    %s: %,d keys in %.2f s (%,.0f gets/s): %s%n",
        what,
        KEYS,
        seconds,
        KEYS / seconds,
        wrong == 0 ? "ok" : wrong + " WRONG");
    if (wrong != 0) {
      System.exit(1);
    }
  }

  private static void checkScan(Region region, byte[][] model) {
    int expected = 0;
    for (int key = 1000; key < 2000; key++) {
      expected += model[key] != null ? 1 : 0;
    }
    int seen = 0;
    boolean ordered = true;
    try (RegionIterator iterator = region.newIterator(key(2000))) {
      byte[] previous = null;
      for (iterator.seek(key(1000)); iterator.isValid(); iterator.next()) {
        byte[] current = iterator.key();
        ordered &= previous == null || Arrays.compare(previous, current) < 0;
        previous = current;
        seen++;
      }
    }
    boolean ok = ordered && seen == expected;
    System.out.printf(
        Locale.ROOT,
        "  check    scan of [user00001000, user00002000): %d live keys in order: %s%n",
        seen,
        ok ? "ok" : "WRONG (expected " + expected + ")");
    if (!ok) {
      System.exit(1);
    }
  }
}
