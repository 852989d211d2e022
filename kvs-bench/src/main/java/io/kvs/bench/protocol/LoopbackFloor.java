package io.kvs.bench.protocol;

import io.kvs.tools.JsonLine;
import io.kvs.tools.TextTable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The machine's floor for a request over loopback TCP, with none of KVS in it: the native tool
 * {@code kvs_loopback_floor} (kvs-native/src/main/cpp/tools/loopback_floor_main.cc) sends 100 B
 * from a client process through a chain of relay processes, each one thread blocking in {@code
 * epoll_wait} as a shard does, and back. One hop is a read's path (client, server, client), two a
 * replicated write's (client, primary, backup, primary, client); each also with every process
 * polling 50 us before it blocks, as a spinning data plane would. What KVS's one-request latency
 * and context switches are compared with (docs/BENCHMARKS.md).
 */
final class LoopbackFloor {
  /** One configuration's result, as the tool printed it. */
  record Result(int hops, int spinUs, Map<String, Double> values) {
    double get(String key) {
      return values.getOrDefault(key, Double.NaN);
    }

    String json(boolean quick) {
      return new JsonLine()
          .put("transport", "loopback-floor")
          .put("hops", hops)
          .put("spin_us", spinUs)
          .put("payload_bytes", 100)
          .put("outstanding", 1)
          .put("mean_us", get("mean_us"))
          .put("p50_us", get("p50_us"))
          .put("p99_us", get("p99_us"))
          .put("p999_us", get("p999_us"))
          .put("relay_cpu_us_per_op", get("relay_cpu_us_per_rt"))
          .put("relay_switches_per_op", get("relay_switches_per_rt"))
          .put("profile", quick ? "quick" : "full")
          .toString();
    }
  }

  private LoopbackFloor() {}

  /** Runs the tool for 1 and 2 hops, blocking and spinning; none if the tool is not built. */
  static List<Result> measure(boolean quick) throws IOException, InterruptedException {
    Path tool = tool();
    List<Result> results = new ArrayList<>();
    if (!Files.isExecutable(tool)) {
      System.out.println("  (no loopback floor: " + tool + " is not built; ./kvs build makes it)");
      return results;
    }
    int rounds = quick ? 20_000 : 100_000;
    for (int hops : new int[] {1, 2}) {
      for (int spinUs : new int[] {0, 50}) {
        Process process =
            new ProcessBuilder(
                    tool.toString(),
                    "--hops",
                    Integer.toString(hops),
                    "--rounds",
                    Integer.toString(rounds),
                    "--spin-us",
                    Integer.toString(spinUs))
                .redirectErrorStream(true)
                .start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(5, TimeUnit.MINUTES) || process.exitValue() != 0) {
          throw new IllegalStateException(tool + " failed: " + out);
        }
        Map<String, Double> values = new HashMap<>();
        for (String pair : out.trim().split("\\s+")) {
          String[] kv = pair.split("=", 2);
          if (kv.length == 2) {
            values.put(kv[0], Double.parseDouble(kv[1]));
          }
        }
        results.add(new Result(hops, spinUs, values));
      }
    }
    return results;
  }

  static void print(List<Result> results) {
    if (results.isEmpty()) {
      return;
    }
    TextTable table =
        new TextTable(
            1,
            "loopback floor",
            "spin us",
            "mean us",
            "p50 us",
            "p99 us",
            "p99.9 us",
            "relays' CPU us/op",
            "relays' switches/op");
    for (Result r : results) {
      table.row(
          r.hops() == 1 ? "1 hop (a read)" : r.hops() + " hops (a replicated write)",
          Integer.toString(r.spinUs()),
          String.format(Locale.ROOT, "%.1f", r.get("mean_us")),
          String.format(Locale.ROOT, "%.1f", r.get("p50_us")),
          String.format(Locale.ROOT, "%.1f", r.get("p99_us")),
          String.format(Locale.ROOT, "%.1f", r.get("p999_us")),
          String.format(Locale.ROOT, "%.2f", r.get("relay_cpu_us_per_rt")),
          String.format(Locale.ROOT, "%.2f", r.get("relay_switches_per_rt")));
    }
    System.out.println();
    System.out.println("The machine's floor, 100 B over loopback TCP with none of KVS in it:");
    System.out.print(table);
  }

  private static Path tool() {
    String home = System.getenv("KVS_HOME");
    Path base = home == null || home.isEmpty() ? Path.of("") : Path.of(home);
    return base.resolve(Path.of("kvs-native", "target", "native", "kvs_loopback_floor"));
  }
}
