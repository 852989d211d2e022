package io.kvs.bench.failover;

import io.kvs.bench.LineChart;
import io.kvs.bench.history.History;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.LinearizabilityChecker;
import io.kvs.bench.history.Operation.Outcome;
import io.kvs.bench.history.Verdict;
import io.kvs.client.KvsClient;
import io.kvs.client.Transport;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.security.SecurityOptions;
import io.kvs.tools.JsonLine;
import io.kvs.tools.LaunchedCluster;
import io.kvs.tools.TextTable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * {@code ./kvs bench failover [--quick]}: a local cluster of processes (ZooKeeper, a master, three
 * region servers, 8 regions) under a steady write and read load from recorded clients, at
 * replication 3 and 2; N times, the server that is primary of the most regions is killed with
 * SIGKILL and, once every region it led takes writes again, restarted. Per kill: the time from the
 * kill to the first acknowledged write (started after the kill) to each region it led, and until
 * every group is whole again (every region OPEN with its replication factor of members, none
 * catching up); how many regions the victim led and how long after the group was whole the master's
 * balancer had spread leadership again (no server leading two regions more than another; the next
 * kill waits for it, at most 2 minutes); throughput before, during and after. Over the run:
 * acknowledged writes lost and the per-key linearizability verdict of the whole history.
 *
 * <p>Prints a table, writes JSON lines to {@code target/bench/failover.json} (one per kill, {@code
 * "type":"kill"}, and a summary per replication factor with {@code rf}, {@code kills}, {@code
 * lost_acked_writes}, {@code linearizable}, {@code unavailable_ms_p50}, {@code unavailable_ms_max},
 * {@code rereplicated_ms_p50}) and draws throughput over time with the kills marked ({@code
 * failover.png}).
 *
 * <p>Usage: {@code [--quick] [--kills N] [--rf 3,2] [--clients N] [--keys N] [--rate
 * OPS_PER_CLIENT] [--session-timeout-ms MS] [--out-dir DIR] [--data-dir DIR]}. Quick: 10 kills per
 * replication factor; full: 40.
 */
public final class FailoverBenchmark {
  private static final int SERVERS = 3;
  private static final int REGIONS = 8;
  private static final Duration SERVED_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration WHOLE_TIMEOUT = Duration.ofSeconds(180);
  private static final Duration SETTLE = Duration.ofSeconds(3);
  // How long a kill waits for the master's balancer to spread leadership again before the next.
  private static final Duration BALANCE_TIMEOUT = Duration.ofSeconds(120);

  private record Kill(
      int rf,
      int number,
      String victim,
      double atSeconds,
      List<Long> unavailableMs,
      long rereplicatedMs,
      long balancedMs,
      double before,
      double during,
      double after) {}

  private record Options(
      int kills,
      List<Integer> replication,
      int clients,
      int keys,
      int rate,
      int sessionTimeoutMs,
      Path outDir,
      Path dataDir) {}

  public static void main(String[] args) throws Exception {
    boolean quick = false;
    Integer kills = null;
    List<Integer> replication = List.of(3, 2);
    int clients = 4;
    int keys = 64;
    // Operations a second each client starts: 10 kills that wait up to two minutes each for the
    // balancer stay within the recorder's 8 M operations.
    int rate = 1000;
    int sessionTimeoutMs = 4000;
    Path outDir = Paths.get("target", "bench");
    Path dataDir = Paths.get("target", "bench", "data");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> quick = true;
        case "--kills" -> kills = Integer.parseInt(args[++i]);
        case "--rf" ->
            replication = Arrays.stream(args[++i].split(",")).map(Integer::parseInt).toList();
        case "--clients" -> clients = Integer.parseInt(args[++i]);
        case "--keys" -> keys = Integer.parseInt(args[++i]);
        case "--rate" -> rate = Integer.parseInt(args[++i]);
        case "--session-timeout-ms" -> sessionTimeoutMs = Integer.parseInt(args[++i]);
        case "--out-dir" -> outDir = Paths.get(args[++i]);
        case "--data-dir" -> dataDir = Paths.get(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    Options options =
        new Options(
            kills != null ? kills : quick ? 10 : 40,
            replication,
            clients,
            keys,
            rate,
            sessionTimeoutMs,
            outDir,
            dataDir);
    new FailoverBenchmark().run(options);
  }

  private void run(Options options) throws Exception {
    Files.createDirectories(options.outDir());
    List<JsonLine> lines = new ArrayList<>();
    List<LineChart.Panel> panels = new ArrayList<>();
    TextTable table =
        new TextTable(
            1,
            "rf",
            "kills",
            "unavail p50 ms",
            "unavail max ms",
            "whole p50 ms",
            "whole max ms",
            "victim led max",
            "balanced p50 ms",
            "balanced max ms",
            "ops/s before",
            "during",
            "after",
            "lost acked",
            "linearizable");
    for (int rf : options.replication()) {
      RunResult result = runOne(rf, options);
      lines.addAll(result.lines());
      panels.add(result.panel());
      table.row(result.summaryCells());
    }
    System.out.println();
    System.out.println(table);
    Path json = options.outDir().resolve("failover.json");
    StringBuilder out = new StringBuilder();
    lines.forEach(line -> out.append(line).append('\n'));
    Files.writeString(json, out.toString(), StandardCharsets.UTF_8);
    Path chart = options.outDir().resolve("failover.png");
    LineChart.write(chart, "Throughput under primary kills (acknowledged ops/s)", panels);
    System.out.println("results: " + json + ", chart: " + chart);
  }

  private record RunResult(List<JsonLine> lines, LineChart.Panel panel, String[] summaryCells) {}

  private RunResult runOne(int rf, Options options) throws Exception {
    Path dir = options.dataDir().resolve("failover-rf" + rf);
    List<String> start =
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
            Integer.toString(rf),
            "--session-timeout-ms",
            Integer.toString(options.sessionTimeoutMs()));
    System.out.printf("RF %d: starting a cluster in %s%n", rf, dir);
    List<Kill> kills = new ArrayList<>();
    List<JsonLine> lines = new ArrayList<>();
    HistoryRecorder recorder = new HistoryRecorder(8 << 20);
    double[] perSecond;
    try (LaunchedCluster cluster = LaunchedCluster.start(dir, start, () -> {})) {
      String[] connect = cluster.connect();
      try (KvsClient client =
          KvsClient.builder()
              .zookeeper(connect[0])
              .cluster(connect[1])
              .transport(Transport.TCP)
              .operationTimeout(Duration.ofSeconds(5))
              .security(SecurityOptions.forClusterDirectory(cluster.dir(), "client"))
              .build()) {
        await("the cluster at full strength", WHOLE_TIMEOUT, () -> whole(client.regionMap(), rf));
        FailoverLoad load =
            new FailoverLoad(client, recorder, options.keys(), client.regionMap(), options.rate());
        load.start(options.clients());
        sleep(SETTLE);
        for (int number = 1; number <= options.kills(); number++) {
          kills.add(killOnce(rf, number, cluster, client, load));
          sleep(SETTLE);
        }
        load.stop();
        load.finalReads(options.clients());
        perSecond = load.perSecond((int) (load.now() / 1_000_000_000L));
      }
    }
    History history = recorder.history();
    Verdict verdict = new LinearizabilityChecker().check(history);
    if (!verdict.isLinearizable() || !verdict.lostWrites().isEmpty()) {
      Path saved = options.outDir().resolve("failover-rf" + rf + "-history.jsonl");
      history.writeJsonLines(saved);
      System.out.println("history kept in " + saved + ": " + verdict.describe());
    }
    long failed =
        history.operations().stream()
            .filter(operation -> operation.outcome() != Outcome.OK)
            .count();
    List<Long> unavailable = new ArrayList<>();
    List<Long> whole = new ArrayList<>();
    List<Long> balanced = new ArrayList<>();
    int mostLed = 0;
    for (Kill kill : kills) {
      unavailable.addAll(kill.unavailableMs());
      whole.add(kill.rereplicatedMs());
      balanced.add(kill.balancedMs());
      mostLed = Math.max(mostLed, kill.unavailableMs().size());
      lines.add(
          new JsonLine()
              .put("type", "kill")
              .put("rf", rf)
              .put("kill", kill.number())
              .put("victim", kill.victim())
              .put("at_s", round(kill.atSeconds()))
              .put("unavailable_ms", kill.unavailableMs())
              .put("rereplicated_ms", kill.rereplicatedMs())
              .put("victim_led", kill.unavailableMs().size())
              .put("balanced_ms", kill.balancedMs())
              .put("ops_per_s_before", round(kill.before()))
              .put("ops_per_s_during", round(kill.during()))
              .put("ops_per_s_after", round(kill.after())));
    }
    double before = kills.stream().mapToDouble(Kill::before).average().orElse(0);
    double during = kills.stream().mapToDouble(Kill::during).average().orElse(0);
    double after = kills.stream().mapToDouble(Kill::after).average().orElse(0);
    JsonLine summary =
        new JsonLine()
            .put("type", "summary")
            .put("rf", rf)
            .put("kills", kills.size())
            .put("lost_acked_writes", verdict.lostWrites().size())
            .put("linearizable", verdict.isLinearizable())
            .put("unavailable_ms_p50", percentile(unavailable, 50))
            .put("unavailable_ms_max", percentile(unavailable, 100))
            .put("rereplicated_ms_p50", percentile(whole, 50))
            .put("rereplicated_ms_max", percentile(whole, 100))
            .put("victim_led_max", mostLed)
            .put("balanced_ms_p50", percentile(balanced, 50))
            .put("balanced_ms_max", percentile(balanced, 100))
            .put("ops_per_s_before", round(before))
            .put("ops_per_s_during", round(during))
            .put("ops_per_s_after", round(after))
            .put("operations", history.size())
            .put("failed_operations", failed)
            .put("session_timeout_ms", options.sessionTimeoutMs())
            .put("rate_per_client", options.rate());
    lines.add(summary);
    System.out.println("RF " + rf + ": " + verdict.summary());
    LineChart.Panel panel =
        new LineChart.Panel(
            "RF " + rf + ": " + kills.size() + " kills of the primary of the most regions",
            "ops/s",
            perSecond,
            kills.stream().map(Kill::atSeconds).toList());
    String[] cells = {
      Integer.toString(rf),
      Integer.toString(kills.size()),
      Long.toString(percentile(unavailable, 50)),
      Long.toString(percentile(unavailable, 100)),
      Long.toString(percentile(whole, 50)),
      Long.toString(percentile(whole, 100)),
      Integer.toString(mostLed),
      Long.toString(percentile(balanced, 50)),
      Long.toString(percentile(balanced, 100)),
      String.format(Locale.ROOT, "%.0f", before),
      String.format(Locale.ROOT, "%.0f", during),
      String.format(Locale.ROOT, "%.0f", after),
      Integer.toString(verdict.lostWrites().size()),
      Boolean.toString(verdict.isLinearizable())
    };
    return new RunResult(lines, panel, cells);
  }

  private Kill killOnce(
      int rf, int number, LaunchedCluster cluster, KvsClient client, FailoverLoad load)
      throws Exception {
    RegionMap map = client.regionMap();
    Map<String, Integer> led = new HashMap<>();
    map.regions().forEach(region -> led.merge(region.primary(), 1, Integer::sum));
    String victim =
        led.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
    List<Long> affected =
        map.regions().stream()
            .filter(region -> region.primary().equals(victim))
            .map(RegionDescriptor::id)
            .toList();
    long killedAt = load.now();
    cluster.kill("server-" + victim);
    // Writes started once it is gone: one acknowledged then was served by someone else.
    load.watchRegions(load.now());
    await(
        "every region " + victim + " led takes writes again",
        SERVED_TIMEOUT,
        () -> affected.stream().allMatch(id -> load.firstWriteAfterWatch(id) >= 0));
    List<Long> unavailable =
        affected.stream()
            .map(id -> (load.firstWriteAfterWatch(id) - killedAt) / 1_000_000)
            .toList();
    cluster.run("restart", victim);
    await("every group whole again", WHOLE_TIMEOUT, () -> whole(client.regionMap(), rf));
    long wholeAt = load.now();
    // The master's balancer hands leadership back to the restarted server; the next kill waits for
    // it (a minute between kills is closer to a real cluster's than none), bounded: -1 if it did
    // not balance in time.
    long balancedMs = -1;
    long waitUntil = System.nanoTime() + BALANCE_TIMEOUT.toNanos();
    while (System.nanoTime() < waitUntil) {
      if (balanced(client.regionMap(), rf)) {
        balancedMs = (load.now() - wholeAt) / 1_000_000;
        break;
      }
      Thread.sleep(50);
    }
    long settledAt = load.now();
    sleep(SETTLE);
    Kill kill =
        new Kill(
            rf,
            number,
            victim,
            killedAt / 1e9,
            unavailable,
            (wholeAt - killedAt) / 1_000_000,
            balancedMs,
            load.throughput(killedAt - 5_000_000_000L, killedAt),
            load.throughput(killedAt, wholeAt),
            load.throughput(settledAt, settledAt + SETTLE.toNanos()));
    System.out.printf(
        Locale.ROOT,
        "RF %d kill %d: %s (led %s): writable again after %s ms, whole after %d ms,"
            + " leadership balanced %d ms later%n",
        rf,
        number,
        victim,
        affected,
        unavailable,
        kill.rereplicatedMs(),
        balancedMs);
    return kill;
  }

  /** Whole, and no server leading more than one region more than another. */
  private static boolean balanced(RegionMap map, int rf) {
    if (!whole(map, rf)) {
      return false;
    }
    Map<String, Integer> led = new HashMap<>();
    map.regions().forEach(region -> region.members().forEach(m -> led.putIfAbsent(m, 0)));
    map.regions().forEach(region -> led.merge(region.primary(), 1, Integer::sum));
    int most = led.values().stream().mapToInt(Integer::intValue).max().orElse(0);
    int least = led.values().stream().mapToInt(Integer::intValue).min().orElse(0);
    return led.size() == SERVERS && most - least <= 1;
  }

  /** Every region OPEN with {@code rf} members, none catching up. */
  private static boolean whole(RegionMap map, int rf) {
    return map.size() == REGIONS
        && map.regions().stream()
            .allMatch(
                region ->
                    region.state() == RegionState.OPEN
                        && region.members().size() == rf
                        && region.joining().isEmpty());
  }

  private static void await(String what, Duration timeout, BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("not within " + timeout + ": " + what);
      }
      Thread.sleep(20);
    }
  }

  private static void sleep(Duration duration) throws InterruptedException {
    Thread.sleep(duration.toMillis()); // a measured interval of load, not a synchronisation
  }

  private static long percentile(List<Long> values, int percentile) {
    if (values.isEmpty()) {
      return 0;
    }
    List<Long> sorted = values.stream().sorted().toList();
    int index = (int) Math.ceil(percentile / 100.0 * sorted.size()) - 1;
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
  }

  private static double round(double value) {
    return Math.round(value * 10) / 10.0;
  }
}
