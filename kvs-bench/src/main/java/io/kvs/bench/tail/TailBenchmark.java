package io.kvs.bench.tail;

import io.kvs.bench.BarChart;
import io.kvs.bench.engine.Keys;
import io.kvs.bench.engine.ZipfianGenerator;
import io.kvs.client.KvsClient;
import io.kvs.client.Transport;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.security.SecurityOptions;
import io.kvs.tools.JsonLine;
import io.kvs.tools.LaunchedCluster;
import io.kvs.tools.TextTable;
import io.kvs.tools.local.LocalStatus;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

/**
 * {@code ./kvs bench tail [--quick]}: tail latency under open-loop load (RStore's measurement). A
 * local cluster of processes (ZooKeeper, a master, three region servers, RF 3, send-index, small
 * L0s so that compactions keep running) is loaded with {@code records} pairs of the SD size mix;
 * then workload A (half reads, half updates, Zipfian) runs closed loop to measure the peak, and
 * open loop at 25, 50, 75 and 90 % of it, each operation's latency counted from its intended start
 * (coordinated omission corrected, HdrHistogram). Per phase and operation type: p50, p99, p99.9,
 * max, the rate reached, errors, and the fraction of the phase with a compaction running ({@link
 * CompactionWatch}).
 *
 * <p>Prints a table, writes JSON lines to {@code target/bench/tail.json} (fields {@code
 * load_fraction}, {@code op}, {@code p50_us}, {@code p99_us}, {@code p999_us}, {@code max_us}, and
 * {@code target_ops}, {@code achieved_ops}, {@code errors}, {@code compaction_coverage}, {@code
 * write_stalls}, {@code write_stall_ms}) and draws the percentiles against load ({@code tail.png}).
 *
 * <p>Usage: {@code [--quick] [--records N] [--seconds N] [--fractions 25,50,75,90] [--in-flight N]
 * [--l0-size BYTES] [--out-dir DIR] [--data-dir DIR] [--native-library FILE]}. Quick: 100,000
 * records, 20 s phases; full: 1,000,000 records, 60 s phases. {@code --native-library}: the servers
 * load this libkvs.so (a build tree's, whose symbols a profiler can read) instead of the jar's.
 */
public final class TailBenchmark {
  private static final int SERVERS = 3;
  private static final int REGIONS = 6;
  private static final int MAX_OUTSTANDING = 4096;
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);

  private record Options(
      long records,
      Duration phase,
      List<Integer> fractions,
      int inFlight,
      long l0SizeBytes,
      boolean quick,
      Path outDir,
      Path dataDir,
      Path nativeLibrary) {}

  private TailBenchmark() {}

  public static void main(String[] args) throws Exception {
    boolean quick = false;
    Long records = null;
    Integer seconds = null;
    List<Integer> fractions = List.of(25, 50, 75, 90);
    int inFlight = 64;
    long l0Size = 2L << 20;
    Path outDir = Paths.get("target", "bench");
    Path dataDir = Paths.get("target", "bench", "data");
    Path nativeLibrary = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> quick = true;
        case "--records" -> records = Long.parseLong(args[++i]);
        case "--seconds" -> seconds = Integer.parseInt(args[++i]);
        case "--fractions" ->
            fractions = Arrays.stream(args[++i].split(",")).map(Integer::parseInt).toList();
        case "--in-flight" -> inFlight = Integer.parseInt(args[++i]);
        case "--l0-size" -> l0Size = Long.parseLong(args[++i]);
        case "--out-dir" -> outDir = Paths.get(args[++i]);
        case "--data-dir" -> dataDir = Paths.get(args[++i]);
        case "--native-library" -> nativeLibrary = Paths.get(args[++i]).toAbsolutePath();
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    Options options =
        new Options(
            records != null ? records : quick ? 100_000 : 1_000_000,
            Duration.ofSeconds(seconds != null ? seconds : quick ? 20 : 60),
            fractions,
            inFlight,
            l0Size,
            quick,
            outDir,
            dataDir,
            nativeLibrary);
    run(options);
  }

  private static void run(Options options) throws Exception {
    Files.createDirectories(options.outDir());
    Path dir = options.dataDir().resolve("tail");
    List<String> start =
        new ArrayList<>(
            List.of(
                "--servers",
                Integer.toString(SERVERS),
                "--regions",
                Integer.toString(REGIONS),
                "--split-first-size", // a fixed layout, so that runs compare
                "0",
                "--merge-size",
                "0",
                "--replication",
                "3",
                "--mode",
                "send-index",
                "--split-prefix",
                "user",
                "--l0-size",
                Long.toString(options.l0SizeBytes())));
    if (options.nativeLibrary() != null) {
      start.addAll(List.of("--native-library", options.nativeLibrary().toString()));
    }
    System.out.printf("starting a cluster in %s%n", dir);
    List<JsonLine> lines = new ArrayList<>();
    TextTable table =
        new TextTable(
            2,
            "load",
            "op",
            "target ops/s",
            "reached ops/s",
            "p50 us",
            "p99 us",
            "p99.9 us",
            "max us",
            "p99/p50",
            "errors",
            "compacting",
            "write stalls",
            "stalled ms");
    List<String> groups = new ArrayList<>();
    List<double[]> readRows = new ArrayList<>();
    List<double[]> updateRows = new ArrayList<>();
    try (LaunchedCluster cluster = LaunchedCluster.start(dir, start, () -> {})) {
      String[] connect = cluster.connect();
      Collection<ServerInfo> servers = LocalStatus.liveServers(connect[0], connect[1]).values();
      SecurityOptions admin = SecurityOptions.forClusterDirectory(cluster.dir(), "admin");
      List<Long> pids = new ArrayList<>();
      for (int s = 1; s <= SERVERS; s++) {
        cluster.process("server-s" + s).ifPresent(p -> pids.add(p.pid()));
      }
      try (KvsClient client =
              KvsClient.builder()
                  .zookeeper(connect[0])
                  .cluster(connect[1])
                  .transport(Transport.TCP)
                  .operationTimeout(Duration.ofSeconds(30))
                  .security(SecurityOptions.forClusterDirectory(cluster.dir(), "client"))
                  .build();
          CompactionWatch compactions = new CompactionWatch(pids)) {
        awaitWrites(client);
        double zetaN = ZipfianGenerator.zeta(options.records(), ZipfianGenerator.YCSB_THETA);
        load(client, options);
        RunA workload = new RunA(client, options.records(), zetaN, 42);
        System.out.printf(
            "peak: closed loop, %d in flight, %s%n", options.inFlight(), options.phase());
        compactions.reset();
        WriteStalls before = WriteStalls.take(servers, admin);
        OpenLoop.Result peak = OpenLoop.closed(workload, options.inFlight(), options.phase());
        double peakOps = peak.opsPerSecond();
        addRows(
            table,
            lines,
            "peak",
            1.0,
            0,
            peak,
            compactions.coverage(),
            WriteStalls.take(servers, admin).since(before),
            options.quick());
        for (int percent : options.fractions()) {
          double rate = peakOps * percent / 100.0;
          System.out.printf("open loop at %d %% of the peak: %.0f ops/s%n", percent, rate);
          compactions.reset();
          WriteStalls phaseStart = WriteStalls.take(servers, admin);
          OpenLoop.Result result = OpenLoop.open(workload, rate, MAX_OUTSTANDING, options.phase());
          addRows(
              table,
              lines,
              percent + " %",
              percent / 100.0,
              rate,
              result,
              compactions.coverage(),
              WriteStalls.take(servers, admin).since(phaseStart),
              options.quick());
          System.out.println("  worst latency by when the operation was due: " + stalls(result));
          groups.add(percent + " %");
          readRows.add(percentiles(result.latencies().get(RunA.Op.READ)));
          updateRows.add(percentiles(result.latencies().get(RunA.Op.UPDATE)));
        }
      }
    }
    System.out.println();
    System.out.println(table);
    Path json = options.outDir().resolve("tail.json");
    StringBuilder out = new StringBuilder();
    lines.forEach(line -> out.append(line).append('\n'));
    Files.writeString(json, out.toString(), StandardCharsets.UTF_8);
    Path chart = options.outDir().resolve("tail.png");
    BarChart.write(
        chart,
        "Latency under open-loop load (workload A, SD, RF 3; from each operation's intended start)",
        List.of("p50", "p99", "p99.9"),
        List.of(
            new BarChart.Panel("reads", "ms", groups, readRows.toArray(new double[0][])),
            new BarChart.Panel("updates", "ms", groups, updateRows.toArray(new double[0][]))),
        2);
    System.out.println("results: " + json + ", chart: " + chart);
  }

  /** The five tenths of a second whose operations waited longest: "at 3.2 s 120 ms, ...". */
  private static String stalls(OpenLoop.Result result) {
    long[] worst = result.worstPerTenth();
    Integer[] order = new Integer[worst.length];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (a, b) -> Long.compare(worst[b], worst[a]));
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < Math.min(5, order.length); i++) {
      out.append(i == 0 ? "" : ", ")
          .append(
              String.format(
                  Locale.ROOT, "at %.1f s %d ms", order[i] / 10.0, worst[order[i]] / 1000));
    }
    return out.toString();
  }

  /** p50, p99 and p99.9 in milliseconds. */
  private static double[] percentiles(Histogram h) {
    return new double[] {
      h.getValueAtPercentile(50) / 1000.0,
      h.getValueAtPercentile(99) / 1000.0,
      h.getValueAtPercentile(99.9) / 1000.0
    };
  }

  private static void addRows(
      TextTable table,
      List<JsonLine> lines,
      String label,
      double fraction,
      double targetOps,
      OpenLoop.Result result,
      double coverage,
      WriteStalls stalls,
      boolean quick) {
    for (RunA.Op op : RunA.Op.values()) {
      Histogram h = result.latencies().get(op);
      long p50 = h.getValueAtPercentile(50);
      long p99 = h.getValueAtPercentile(99);
      long p999 = h.getValueAtPercentile(99.9);
      table.row(
          label,
          op.name().toLowerCase(Locale.ROOT),
          targetOps > 0 ? String.format(Locale.ROOT, "%.0f", targetOps) : "closed",
          String.format(Locale.ROOT, "%.0f", result.opsPerSecond()),
          Long.toString(p50),
          Long.toString(p99),
          Long.toString(p999),
          Long.toString(h.getMaxValue()),
          String.format(Locale.ROOT, "%.1f", p99 / (double) Math.max(1, p50)),
          Long.toString(result.errors()),
          String.format(Locale.ROOT, "%.0f %%", coverage * 100),
          Long.toString(stalls.stalls()),
          Long.toString(stalls.stallMicros() / 1000));
      lines.add(
          new JsonLine()
              .put("load_fraction", fraction)
              .put("phase", targetOps > 0 ? "open" : "closed")
              .put("op", op.name().toLowerCase(Locale.ROOT))
              .put("p50_us", p50)
              .put("p99_us", p99)
              .put("p999_us", p999)
              .put("max_us", h.getMaxValue())
              .put("operations", h.getTotalCount())
              .put("target_ops", targetOps)
              .put("achieved_ops", result.opsPerSecond())
              .put("errors", result.errors())
              .put("compaction_coverage", coverage)
              .put("write_stalls", stalls.stalls())
              .put("write_stall_ms", stalls.stallMicros() / 1000)
              .put("profile", quick ? "quick" : "full"));
    }
  }

  /** Waits until a write goes through: every region has its primary. */
  private static void awaitWrites(KvsClient client) throws Exception {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    while (true) {
      try {
        for (long n = 0; n < 64; n++) {
          client.put(Keys.of(-1 - n), new byte[] {1});
        }
        return;
      } catch (RuntimeException e) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("the cluster takes no writes: " + e, e);
        }
        TimeUnit.MILLISECONDS.sleep(200); // a retry's pause; the cluster's state is not awaitable
      }
    }
  }

  /** Inserts the records, {@code inFlight} at a time. */
  private static void load(KvsClient client, Options options) throws InterruptedException {
    System.out.printf("loading %,d records%n", options.records());
    RunA values = new RunA(client, 1, 1, 7);
    Semaphore permits = new Semaphore(options.inFlight());
    AtomicLong failed = new AtomicLong();
    long started = System.nanoTime();
    for (long n = 0; n < options.records(); n++) {
      permits.acquire();
      CompletableFuture<Void> put = client.putAsync(Keys.of(n), values.value());
      put.whenComplete(
          (ok, failure) -> {
            if (failure != null) {
              failed.incrementAndGet();
            }
            permits.release();
          });
    }
    permits.acquire(options.inFlight());
    permits.release(options.inFlight());
    double seconds = (System.nanoTime() - started) / 1e9;
    System.out.printf(
        "loaded in %.1f s (%.0f writes/s), %d failed%n",
        seconds, options.records() / seconds, failed.get());
  }
}
