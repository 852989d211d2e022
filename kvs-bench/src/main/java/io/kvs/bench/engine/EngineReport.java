package io.kvs.bench.engine;

import io.kvs.bench.BarChart;
import io.kvs.tools.Latencies;
import io.kvs.tools.TextTable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** The engine benchmark's table (stdout) and chart (PNG) over all results of a run. */
public final class EngineReport {
  /** Suffix of the systems the native benchmark ran. */
  static final String NATIVE_SUFFIX = "-native";

  private final List<PhaseRow> results = new ArrayList<>();

  /** Adds a result, of the JVM benchmark or the native one. */
  public void add(PhaseRow result) {
    results.add(result);
  }

  public List<PhaseRow> results() {
    return List.copyOf(results);
  }

  /**
   * The table: one row per system, mix and workload (of a repeated run: medians over its rounds,
   * throughput with its range and the number of rounds), then the ratios of KVS to each other
   * system for throughput, CPU per operation, I/O and space amplification and latency (above 1
   * means KVS has more); natively run systems are compared with each other ({@code
   * kvs-native/rocksdb-native}). An open-loop phase's latencies count from each operation's
   * intended start.
   */
  public String table() {
    TextTable table =
        new TextTable(
            3,
            "mix",
            "workload",
            "system",
            "ops/s",
            "cpu us/op",
            "io amp",
            "space amp",
            "p50 us",
            "p99 us",
            "p99.9 us",
            "max us");
    boolean first = true;
    for (KvMix mix : mixes()) {
      for (Workload workload : workloads()) {
        List<PhaseRow> group = select(mix, workload);
        if (group.isEmpty()) {
          continue;
        }
        if (!first) {
          table.separator();
        }
        first = false;
        for (PhaseRow result : group) {
          table.row(
              mix.name(),
              workload.id(),
              result.system() + (result.truncated() ? " (time limit)" : ""),
              result.rounds() > 1
                  ? String.format(
                      Locale.ROOT,
                      "%,.0f (%,.0f-%,.0f, %d)",
                      result.opsPerSec(),
                      result.opsPerSecMin(),
                      result.opsPerSecMax(),
                      result.rounds())
                  : String.format(Locale.ROOT, "%,.0f", result.opsPerSec()),
              number(result.cpuMicrosPerOp()),
              number(result.ioAmplification()),
              number(result.spaceAmplification()),
              number(result.latency().p50Micros()),
              number(result.latency().p99Micros()),
              number(result.latency().p999Micros()),
              number(result.latency().maxMicros()));
        }
        for (String suffix : List.of("", NATIVE_SUFFIX)) {
          ratioRows(table, mix, workload, group, suffix);
        }
      }
    }
    return table.toString();
  }

  private static void ratioRows(
      TextTable table, KvMix mix, Workload workload, List<PhaseRow> group, String suffix) {
    PhaseRow kvs = find(group, "kvs" + suffix);
    for (String other : List.of("rocksdb", "rocksdb-wal50", "blobdb")) {
      PhaseRow base = find(group, other + suffix);
      if (kvs != null && base != null) {
        Latencies.Summary mine = kvs.latency();
        Latencies.Summary theirs = base.latency();
        table.row(
            mix.name(),
            workload.id(),
            "kvs" + suffix + "/" + other + suffix,
            ratio(kvs.opsPerSec(), base.opsPerSec()),
            ratio(kvs.cpuMicrosPerOp(), base.cpuMicrosPerOp()),
            ratio(kvs.ioAmplification(), base.ioAmplification()),
            ratio(kvs.spaceAmplification(), base.spaceAmplification()),
            ratio(mine.p50Micros(), theirs.p50Micros()),
            ratio(mine.p99Micros(), theirs.p99Micros()),
            ratio(mine.p999Micros(), theirs.p999Micros()),
            ratio(mine.maxMicros(), theirs.maxMicros()));
      }
    }
  }

  /**
   * Writes the chart: per mix, one panel of throughput and one of I/O amplification, grouped by
   * workload with one bar per system.
   */
  public void writeChart(Path file) throws IOException {
    List<String> systems = systems();
    List<BarChart.Panel> panels = new ArrayList<>();
    for (KvMix mix : mixes()) {
      List<String> groups = new ArrayList<>();
      List<double[]> throughput = new ArrayList<>();
      List<double[]> io = new ArrayList<>();
      for (Workload workload : workloads()) {
        List<PhaseRow> group = select(mix, workload);
        if (group.isEmpty()) {
          continue;
        }
        groups.add(workload.id());
        double[] ops = new double[systems.size()];
        double[] amp = new double[systems.size()];
        for (int i = 0; i < systems.size(); i++) {
          PhaseRow result = find(group, systems.get(i));
          ops[i] = result == null ? Double.NaN : result.opsPerSec();
          amp[i] = result == null ? Double.NaN : result.ioAmplification();
        }
        throughput.add(ops);
        io.add(amp);
      }
      panels.add(
          new BarChart.Panel(
              mix.name() + " mix: throughput",
              "ops/s",
              groups,
              throughput.toArray(new double[0][])));
      panels.add(
          new BarChart.Panel(
              mix.name() + " mix: I/O amplification (device bytes / KV bytes)",
              "I/O amplification",
              groups,
              io.toArray(new double[0][])));
    }
    BarChart.write(
        file, "Storage engines, YCSB, same data, memory and client threads", systems, panels, 2);
  }

  private List<KvMix> mixes() {
    Set<KvMix> seen = new LinkedHashSet<>();
    results.forEach(r -> seen.add(r.mix()));
    return new ArrayList<>(seen);
  }

  private List<Workload> workloads() {
    // Workload order (load first), not the order the results came in.
    List<Workload> present = new ArrayList<>();
    for (Workload workload : Workload.values()) {
      if (results.stream().anyMatch(r -> r.workload() == workload)) {
        present.add(workload);
      }
    }
    return present;
  }

  private List<String> systems() {
    Set<String> seen = new LinkedHashSet<>();
    results.forEach(r -> seen.add(r.system()));
    return new ArrayList<>(seen);
  }

  private List<PhaseRow> select(KvMix mix, Workload workload) {
    return results.stream().filter(r -> r.mix() == mix && r.workload() == workload).toList();
  }

  private static PhaseRow find(List<PhaseRow> group, String system) {
    return group.stream().filter(r -> r.system().equals(system)).findFirst().orElse(null);
  }

  static String number(double value) {
    if (!Double.isFinite(value)) {
      return "n/a";
    }
    double magnitude = Math.abs(value);
    if (magnitude >= 1000) {
      return String.format(Locale.ROOT, "%,.0f", value);
    }
    if (magnitude >= 10) {
      return String.format(Locale.ROOT, "%.1f", value);
    }
    return String.format(Locale.ROOT, "%.2f", value);
  }

  static String ratio(double numerator, double denominator) {
    if (!Double.isFinite(numerator) || !Double.isFinite(denominator) || denominator == 0) {
      return "n/a";
    }
    return String.format(Locale.ROOT, "%.2fx", numerator / denominator);
  }
}
