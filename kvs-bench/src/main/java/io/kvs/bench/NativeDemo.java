package io.kvs.bench;

import io.kvs.nativelib.Crc32c;
import io.kvs.nativelib.NativeLibrary;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Random;
import java.util.function.IntSupplier;
import java.util.zip.CRC32C;

/**
 * What {@code ./kvs demo} runs while the cluster does not exist yet: loads the native data plane
 * from the kvs-native jar, checks CRC32C against its published check value, and measures CRC32C
 * throughput through the JNI boundary next to the JDK's implementation. Exits with status 1 if any
 * check fails.
 */
public final class NativeDemo {
  private static final int CHECK_VALUE = 0xe3069283; // CRC-32C of "123456789"
  private static final int DATA_BYTES = 64 * 1024 * 1024;
  private static final int ROUNDS = 8;

  private NativeDemo() {}

  /** Runs the demo; arguments are ignored. */
  public static void main(String[] args) {
    NativeLibrary.load();
    System.out.println("KVS native data plane");
    System.out.println("  build    " + NativeLibrary.buildInfo());
    System.out.println("  loaded   " + NativeLibrary.source());

    int check = Crc32c.compute("123456789".getBytes(StandardCharsets.US_ASCII));
    boolean checkOk = check == CHECK_VALUE;
    System.out.printf(
        Locale.ROOT,
        "  check    CRC32C(\"123456789\") = %08x, published %08x: %s%n",
        check,
        CHECK_VALUE,
        checkOk ? "ok" : "MISMATCH");

    byte[] heap = new byte[DATA_BYTES];
    new Random(1).nextBytes(heap);
    ByteBuffer direct = ByteBuffer.allocateDirect(DATA_BYTES).put(heap).flip();

    System.out.printf(
        Locale.ROOT, "%nCRC32C over %d MiB, best of %d rounds%n", DATA_BYTES >> 20, ROUNDS);
    System.out.printf(Locale.ROOT, "  %-28s %10s %10s%n", "implementation", "GiB/s", "crc");
    int viaDirect = measure("libkvs, direct ByteBuffer", () -> Crc32c.compute(direct));
    int viaArray = measure("libkvs, byte[]", () -> Crc32c.compute(heap));
    int viaJdk =
        measure(
            "java.util.zip.CRC32C",
            () -> {
              CRC32C crc = new CRC32C();
              crc.update(heap);
              return (int) crc.getValue();
            });
    boolean agree = viaDirect == viaArray && viaArray == viaJdk;
    System.out.println("  all implementations agree: " + (agree ? "yes" : "NO"));
    System.out.println(
        "\nThe cluster (master, region servers, client) arrives with later issues; see README.md.");
    if (!checkOk || !agree) {
      System.exit(1);
    }
  }

  private static int measure(String name, IntSupplier checksum) {
    int result = checksum.getAsInt(); // warm-up
    long best = Long.MAX_VALUE;
    for (int round = 0; round < ROUNDS; round++) {
      long start = System.nanoTime();
      result = checksum.getAsInt();
      best = Math.min(best, System.nanoTime() - start);
    }
    double gibPerSecond = DATA_BYTES / (double) (1L << 30) / (best / 1e9);
    System.out.printf(
        Locale.ROOT, "  %-28s %10.2f %10s%n", name, gibPerSecond, Integer.toHexString(result));
    return result;
  }
}
