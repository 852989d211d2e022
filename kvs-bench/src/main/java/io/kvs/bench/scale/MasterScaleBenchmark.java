package io.kvs.bench.scale;

import io.kvs.bench.BarChart;
import io.kvs.tools.JsonLine;
import io.kvs.tools.TextTable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * {@code ./kvs bench master-scale [--quick]}: the real master (its own process) and ZooKeeper
 * against hundreds of simulated region servers ({@link SimulatedCluster}), at several cluster
 * sizes, replication 2, send-index (issue 28 item 5). Per size: the time to bootstrap until every
 * region is open; reconcile passes while idle (target: at most 1 s) and the ZooKeeper transactions
 * they cost; the master's heap after a full collection and its resident memory; the client's region
 * map loaded from ZooKeeper, the status page ({@code /status} and {@code /api/status}) and {@code
 * ./kvs admin regions}, each timed once; then one server killed (its ZooKeeper connection cut, so
 * its session expires as after {@code kill -9}): the time until its node goes, until every region
 * it held is open again with a whole group on live servers (target: at most the session timeout
 * plus 10 s), the passes meanwhile, ZooKeeper transactions and region znode writes per region
 * changed, and how long after that the client's map showed it.
 *
 * <p>Sizes are {@code REGIONS/SERVERS}; the last size of each profile has every server holding
 * 1,000 regions (RF 2: regions = servers x 500), the failed-server case of the issue. Quick:
 * 500/20, 2,000/50, 2,000/4; full: 1,000/30, 3,000/100, 10,000/300, 10,000/20.
 *
 * <p>Prints a table, writes JSON lines to {@code target/bench/master-scale.json} (one per size) and
 * draws pass time, recovery time and master heap by size ({@code master-scale.png}).
 *
 * <p>Usage: {@code [--quick] [--sizes R/S,R/S,...] [--session-timeout-ms 4000] [--catch-up-ms 100]
 * [--idle-seconds N] [--out-dir DIR] [--data-dir DIR]}.
 */
public final class MasterScaleBenchmark {
  private record Size(int regions, int servers) {
    static Size parse(String text) {
      String[] parts = text.split("/");
      return new Size(Integer.parseInt(parts[0].trim()), Integer.parseInt(parts[1].trim()));
    }

    String label() {
      return String.format(Locale.ROOT, "%,d / %d", regions, servers);
    }
  }

  private MasterScaleBenchmark() {}

  public static void main(String[] args) throws Exception {
    boolean quick = false;
    List<Size> sizes = null;
    Duration sessionTimeout = Duration.ofSeconds(4);
    Duration catchUp = Duration.ofMillis(100);
    Integer idleSeconds = null;
    Path outDir = Paths.get("target", "bench");
    Path dataDir = Paths.get("target", "bench", "data");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> quick = true;
        case "--sizes" -> sizes = Arrays.stream(args[++i].split(",")).map(Size::parse).toList();
        case "--session-timeout-ms" ->
            sessionTimeout = Duration.ofMillis(Long.parseLong(args[++i]));
        case "--catch-up-ms" -> catchUp = Duration.ofMillis(Long.parseLong(args[++i]));
        case "--idle-seconds" -> idleSeconds = Integer.parseInt(args[++i]);
        case "--out-dir" -> outDir = Paths.get(args[++i]);
        case "--data-dir" -> dataDir = Paths.get(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (sizes == null) {
      sizes =
          quick
              ? List.of(new Size(500, 20), new Size(2_000, 50), new Size(2_000, 4))
              : List.of(
                  new Size(1_000, 30),
                  new Size(3_000, 100),
                  new Size(10_000, 300),
                  new Size(10_000, 20));
    }
    Duration idle = Duration.ofSeconds(idleSeconds != null ? idleSeconds : quick ? 10 : 20);
    Files.createDirectories(outDir);
    List<ScaleRun.Result> results = new ArrayList<>();
    for (Size size : sizes) {
      Path directory =
          dataDir.resolve("master-scale").resolve(size.regions() + "-" + size.servers());
      deleteTree(directory);
      results.add(
          new ScaleRun(size.regions(), size.servers(), sessionTimeout, catchUp, idle, directory)
              .run());
    }
    report(results, sessionTimeout, outDir);
  }

  private static void report(List<ScaleRun.Result> results, Duration sessionTimeout, Path outDir)
      throws Exception {
    TextTable table =
        new TextTable(
            1,
            "regions / servers",
            "bootstrap s",
            "idle pass p50 ms",
            "max ms",
            "idle ZK txns/pass",
            "heap MiB",
            "RSS MiB",
            "client map ms",
            "status ms",
            "api/status ms",
            "admin regions ms",
            "victim held",
            "node gone ms",
            "recovered ms",
            "changing pass p50 ms",
            "max ms",
            "ZK txns/region",
            "region writes/region",
            "client map lag ms");
    StringBuilder json = new StringBuilder();
    List<String> groups = new ArrayList<>();
    List<double[]> passValues = new ArrayList<>();
    List<double[]> recoveryValues = new ArrayList<>();
    List<double[]> memoryValues = new ArrayList<>();
    for (ScaleRun.Result r : results) {
      String label = new Size(r.regions(), r.servers()).label();
      double idleRate =
          r.idlePasses().isEmpty()
              ? Double.NaN
              : (double) r.idleTransactions() / r.idlePasses().size();
      table.row(
          label,
          format(r.convergeSeconds(), 1),
          format(percentile(r.idlePasses(), 50), 0),
          format(percentile(r.idlePasses(), 100), 0),
          format(idleRate, 1),
          format(r.heapBytes() / 1048576.0, 1),
          format(r.residentBytes() / 1048576.0, 0),
          format(r.clientLoadMillis(), 0),
          format(r.statusPageMillis(), 0),
          format(r.statusJsonMillis(), 0),
          format(r.adminRegionsMillis(), 0),
          Integer.toString(r.victimHeld()),
          format(r.nodeGoneMillis(), 0),
          format(r.recoveryMillis(), 0),
          format(percentile(r.changePasses(), 50), 0),
          format(percentile(r.changePasses(), 100), 0),
          format((double) r.recoveryTransactions() / r.regionsChanged(), 2),
          format((double) r.recoveryRegionWrites() / r.regionsChanged(), 2),
          format(r.clientCaughtUpMillis(), 0));
      json.append(
              new JsonLine()
                  .put("regions", r.regions())
                  .put("servers", r.servers())
                  .put("replication", 2)
                  .put("session_timeout_ms", sessionTimeout.toMillis())
                  .put("bootstrap_s", r.convergeSeconds())
                  .put("idle_passes", r.idlePasses().size())
                  .put("idle_pass_ms_p50", percentile(r.idlePasses(), 50))
                  .put("idle_pass_ms_max", percentile(r.idlePasses(), 100))
                  .put("idle_zk_transactions", r.idleTransactions())
                  .put("master_heap_bytes", r.heapBytes())
                  .put("master_rss_bytes", r.residentBytes())
                  .put("client_map_load_ms", r.clientLoadMillis())
                  .put("status_page_ms", r.statusPageMillis())
                  .put("status_json_ms", r.statusJsonMillis())
                  .put("admin_regions_ms", r.adminRegionsMillis())
                  .put("victim_regions", r.victimHeld())
                  .put("victim_node_gone_ms", r.nodeGoneMillis())
                  .put("recovered_ms", r.recoveryMillis())
                  .put("changing_passes", r.changePasses().size())
                  .put("changing_pass_ms_p50", percentile(r.changePasses(), 50))
                  .put("changing_pass_ms_max", percentile(r.changePasses(), 100))
                  .put("recovery_zk_transactions", r.recoveryTransactions())
                  .put("recovery_region_writes", r.recoveryRegionWrites())
                  .put("regions_changed", r.regionsChanged())
                  .put("client_map_lag_ms", r.clientCaughtUpMillis()))
          .append('\n');
      groups.add(label);
      passValues.add(
          new double[] {
            percentile(r.idlePasses(), 50),
            percentile(r.idlePasses(), 100),
            percentile(r.changePasses(), 50),
            percentile(r.changePasses(), 100)
          });
      recoveryValues.add(
          new double[] {
            r.nodeGoneMillis() / 1000, r.recoveryMillis() / 1000, Double.NaN, Double.NaN
          });
      memoryValues.add(
          new double[] {
            r.heapBytes() / 1048576.0, r.residentBytes() / 1048576.0, Double.NaN, Double.NaN
          });
    }
    System.out.println();
    System.out.println(table);
    System.out.printf(
        "targets: a pass at most 1,000 ms; a failed server's regions recovered within %d ms"
            + " (session timeout + 10 s)%n",
        sessionTimeout.toMillis() + 10_000);
    Path file = outDir.resolve("master-scale.json");
    Files.writeString(file, json.toString(), StandardCharsets.UTF_8);
    Path chart = outDir.resolve("master-scale.png");
    BarChart.write(
        chart,
        "The master at scale (replication 2, simulated servers): by regions / servers",
        List.of(
            "idle p50 | node gone | heap",
            "idle max | recovered | RSS",
            "changing p50",
            "changing max"),
        List.of(
            new BarChart.Panel("reconcile pass", "ms", groups, passValues.toArray(double[][]::new)),
            new BarChart.Panel(
                "a server killed: its node gone, its regions recovered",
                "s",
                groups,
                recoveryValues.toArray(double[][]::new)),
            new BarChart.Panel(
                "master memory: heap after GC, resident",
                "MiB",
                groups,
                memoryValues.toArray(double[][]::new))),
        1);
    System.out.println("results: " + file + ", chart: " + chart);
  }

  /** The {@code p}th percentile (nearest rank) of {@code values}; NaN if none. */
  static double percentile(List<Double> values, double p) {
    if (values.isEmpty()) {
      return Double.NaN;
    }
    List<Double> sorted = values.stream().sorted().toList();
    int rank = (int) Math.ceil(p / 100 * sorted.size());
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1)));
  }

  private static String format(double value, int decimals) {
    return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%,." + decimals + "f", value);
  }

  private static void deleteTree(Path directory) throws java.io.IOException {
    if (!Files.exists(directory)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(directory)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(path);
      }
    }
  }
}
