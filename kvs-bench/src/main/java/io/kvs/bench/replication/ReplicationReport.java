package io.kvs.bench.replication;

import io.kvs.bench.BarChart;
import io.kvs.bench.replication.ReplicationBenchmark.PhaseResult;
import io.kvs.bench.replication.ServerSample.ThreadRole;
import io.kvs.tools.JsonLine;
import io.kvs.tools.TextTable;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** The replication benchmark's numbers per phase: table, ratios, JSON lines and chart. */
final class ReplicationReport {
  private static final List<String> MODES = List.of("none", "build-index", "send-index");

  /** What one phase measured, per operation of the phase (CPU in microseconds). */
  record Metrics(
      double opsPerSec,
      double cpuUsPerOp,
      double requestUs,
      double insertUs,
      double compactionUs,
      double logReplicationUs,
      double indexShippingUs,
      double backupIndexUs,
      double otherUs,
      double backupIndexCpuUsPerOp,
      double ioAmplification,
      double networkAmplification,
      long backupL0Bytes,
      double contextSwitchesPerOp,
      Map<String, Double> switchesPerOpByThread,
      double postsPerWrite,
      double batchesPerPost) {}

  private final List<PhaseResult> results;
  private final ReplicationBenchmark.Options options;

  ReplicationReport(List<PhaseResult> results, ReplicationBenchmark.Options options) {
    this.results = results;
    this.options = options;
  }

  static Metrics metrics(PhaseResult r) {
    double ops = Math.max(1, r.ycsb().operationCount());
    double userBytes = Math.max(1, r.ycsb().writes() * r.kvBytesPerWrite());
    double requests = 0;
    double compaction = 0;
    double replication = 0;
    double other = 0;
    double shipping = 0;
    double backupLog = 0;
    double backupIndex = 0;
    double backupCompactionBytes = 0;
    double compactionBytes = 0;
    double deviceBytes = 0;
    double networkBytes = 0;
    long backupL0 = 0;
    double switches = 0;
    Map<String, Double> switchesByThread = new TreeMap<>();
    double posts = 0;
    double batches = 0;
    double insert = 0;
    for (ServerSample s : r.servers()) {
      insert += s.counter("service.insertCpuNanos");
      switches += s.contextSwitches();
      s.switchesByThread()
          .forEach((kind, count) -> switchesByThread.merge(kind, count / ops, Double::sum));
      posts += s.counter("replication.writes");
      batches += s.counter("replication.batches");
      requests += s.cpuNanos().get(ThreadRole.REQUESTS);
      compaction += s.cpuNanos().get(ThreadRole.COMPACTION);
      replication += s.cpuNanos().get(ThreadRole.REPLICATION);
      other += s.cpuNanos().get(ThreadRole.OTHER);
      shipping += s.counter("replication.indexShipCpuNanos");
      backupLog += s.counter("replication.backupLogCpuNanos");
      backupIndex += s.counter("replication.backupIndexCpuNanos");
      backupCompactionBytes += s.counter("backup.compactionBytesWritten");
      compactionBytes +=
          s.counter("backup.compactionBytesWritten") + s.counter("primary.compactionBytesWritten");
      deviceBytes += s.deviceReadBytes() + s.deviceWriteBytes();
      networkBytes += s.counter("replication.logBytes") + s.counter("replication.indexBytes");
    }
    for (ServerSample s : r.endSamples()) {
      backupL0 += s.counter("backup.l0Bytes");
    }
    double total = requests + compaction + replication + other;
    // Backups' work runs on request threads (the fabric workers answer their primaries'
    // messages); index shipping partly on compaction threads (copying segments into the stream).
    double requestOnly = Math.max(0, requests - backupLog - backupIndex);
    double logReplication = Math.max(0, replication + backupLog - shipping);
    double compactionOnly = Math.max(0, compaction - Math.max(0, shipping - replication));
    double backupShare = compactionBytes > 0 ? backupCompactionBytes / compactionBytes : 0;
    double micros = 1e3 * ops;
    return new Metrics(
        r.ycsb().opsPerSec(),
        total / micros,
        requestOnly / micros,
        Math.min(insert, requestOnly) / micros,
        compactionOnly / micros,
        logReplication / micros,
        shipping / micros,
        backupIndex / micros,
        other / micros,
        (backupIndex + compaction * backupShare) / micros,
        deviceBytes / userBytes,
        networkBytes / userBytes,
        backupL0,
        switches / ops,
        switchesByThread,
        // One-sided writes posted per write and backup: below 1 when writes are batched.
        posts / Math.max(1, r.ycsb().writes() * Math.max(0, r.rf() - 1)),
        // Batches each post carried: above 1 when regions' batches to one backup go together.
        batches / Math.max(1, posts));
  }

  static void printPhase(PhaseResult r) {
    Metrics m = metrics(r);
    System.out.printf(
        Locale.ROOT,
        "  %-8s %,10.0f ops/s  %7.1f us/op CPU  backup index %6.2f us/op  io amp %5.2f"
            + "  net amp %5.2f  backup L0 %,d B%n",
        r.workload(),
        m.opsPerSec(),
        m.cpuUsPerOp(),
        m.backupIndexCpuUsPerOp(),
        m.ioAmplification(),
        m.networkAmplification(),
        m.backupL0Bytes());
  }

  void write() throws IOException {
    TextTable table =
        new TextTable(
            5,
            "round",
            "mode",
            "rf",
            "mix",
            "phase",
            "ops/s",
            "CPU us/op",
            "req",
            "insert",
            "compact",
            "log repl",
            "idx ship",
            "bkp idx",
            "other",
            "bkp idx+cmp",
            "io amp",
            "net amp",
            "bkp L0 MiB",
            "cs/op",
            "posts/write",
            "batches/post",
            "write p50/p99/p99.9 us");
    List<String> json = new ArrayList<>();
    for (PhaseResult r : results) {
      Metrics m = metrics(r);
      YcsbPhase.Operation write = r.ycsb().operations().get("INSERT");
      if (write == null || write.count() == 0) {
        write = r.ycsb().operations().getOrDefault("UPDATE", r.ycsb().operations().get("READ"));
      }
      table.row(
          Integer.toString(r.round()),
          r.mode(),
          Integer.toString(r.rf()),
          r.mix(),
          r.workload(),
          f("%,.0f", m.opsPerSec()),
          f("%.1f", m.cpuUsPerOp()),
          f("%.1f", m.requestUs()),
          f("%.1f", m.insertUs()),
          f("%.1f", m.compactionUs()),
          f("%.1f", m.logReplicationUs()),
          f("%.2f", m.indexShippingUs()),
          f("%.2f", m.backupIndexUs()),
          f("%.1f", m.otherUs()),
          f("%.2f", m.backupIndexCpuUsPerOp()),
          f("%.2f", m.ioAmplification()),
          f("%.2f", m.networkAmplification()),
          f("%.1f", m.backupL0Bytes() / 1048576.0),
          f("%.2f", m.contextSwitchesPerOp()),
          r.rf() > 1 ? f("%.2f", m.postsPerWrite()) : "-",
          r.rf() > 1 ? f("%.2f", m.batchesPerPost()) : "-",
          write == null ? "-" : f("%.0f/%.0f/%.0f", write.p50(), write.p99(), write.p999()));
      for (Map.Entry<String, YcsbPhase.Operation> op : r.ycsb().operations().entrySet()) {
        if (op.getKey().equals("CLEANUP")) {
          continue;
        }
        json.add(
            new JsonLine()
                .put("round", r.round())
                .put("mode", r.mode())
                .put("rf", r.rf())
                .put("mix", r.mix())
                .put("workload", r.workload())
                .put("operation", op.getKey())
                .put("ops_per_sec", m.opsPerSec())
                .put("cpu_us_per_op", m.cpuUsPerOp())
                .put("request_cpu_us_per_op", m.requestUs())
                .put("insert_cpu_us_per_op", m.insertUs())
                .put("compaction_cpu_us_per_op", m.compactionUs())
                .put("log_replication_cpu_us_per_op", m.logReplicationUs())
                .put("index_shipping_cpu_us_per_op", m.indexShippingUs())
                .put("index_rewrite_cpu_us_per_op", m.backupIndexUs())
                .put("other_cpu_us_per_op", m.otherUs())
                .put("backup_index_cpu_us_per_op", m.backupIndexCpuUsPerOp())
                .put("io_amplification", m.ioAmplification())
                .put("network_amplification", m.networkAmplification())
                .put("backup_l0_bytes", m.backupL0Bytes())
                .put("context_switches_per_op", m.contextSwitchesPerOp())
                .put("context_switches_per_op_by_thread", m.switchesPerOpByThread())
                .put("posts_per_write", m.postsPerWrite())
                .put("batches_per_post", m.batchesPerPost())
                .put("operations", op.getValue().count())
                .put("failed_operations", op.getValue().failures())
                .put("p50_us", op.getValue().p50())
                .put("p99_us", op.getValue().p99())
                .put("p999_us", op.getValue().p999())
                .put("profile", options.profile())
                .put("fabric", options.fabric())
                .toString());
      }
    }
    System.out.println();
    System.out.print(table);
    System.out.println();
    printSwitches();
    printRatios();
    new Table3Breakdown(results).print();
    Files.createDirectories(options.outDir());
    Files.write(options.outDir().resolve("replication.json"), json);
    chart();
    System.out.println();
    System.out.println("results: " + options.outDir().resolve("replication.json").toAbsolutePath());
    System.out.println("chart:   " + options.outDir().resolve("replication.png").toAbsolutePath());
  }

  /**
   * Context switches per operation by kind of thread, all servers together: where the hand-offs are
   * (a thread that blocks and is woken per request shows near 1). Kinds below 0.01 are left out.
   */
  private void printSwitches() {
    System.out.println("context switches per operation by thread, all servers:");
    for (PhaseResult r : results) {
      Metrics m = metrics(r);
      StringBuilder line = new StringBuilder();
      m.switchesPerOpByThread().entrySet().stream()
          .filter(e -> e.getValue() >= 0.01)
          .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
          .forEach(e -> line.append(f("  %s %.2f", e.getKey(), e.getValue())));
      System.out.printf(
          Locale.ROOT,
          "  %d %-10s RF %d %s %-6s %.2f:%s%n",
          r.round(),
          r.mode(),
          r.rf(),
          r.mix(),
          r.workload(),
          m.contextSwitchesPerOp(),
          line);
    }
    System.out.println();
  }

  /**
   * Send-Index against Build-Index and against no replication, per RF, mix and phase: the median
   * over the rounds of each round's ratio (both modes of a round ran back to back), with the
   * spread; marked when the spread is larger than the difference from 1.
   */
  private void printRatios() {
    for (PhaseResult send : results) {
      if (!send.mode().equals("send-index") || send.round() != 1) {
        continue;
      }
      List<double[]> toBuild = new ArrayList<>();
      List<double[]> toNone = new ArrayList<>();
      for (PhaseResult s : results) {
        if (!s.mode().equals("send-index")
            || s.rf() != send.rf()
            || !s.mix().equals(send.mix())
            || !s.workload().equals(send.workload())) {
          continue;
        }
        Metrics sm = metrics(s);
        PhaseResult build = find(s.round(), "build-index", s.rf(), s.mix(), s.workload());
        if (build != null) {
          Metrics b = metrics(build);
          toBuild.add(
              new double[] {
                sm.opsPerSec() / b.opsPerSec(),
                sm.cpuUsPerOp() / b.cpuUsPerOp(),
                sm.backupIndexCpuUsPerOp() / b.backupIndexCpuUsPerOp(),
                sm.ioAmplification() / b.ioAmplification(),
                sm.networkAmplification() / b.networkAmplification()
              });
        }
        PhaseResult none = find(s.round(), "none", 1, s.mix(), s.workload());
        if (none != null) {
          Metrics n = metrics(none);
          toNone.add(
              new double[] {sm.opsPerSec() / n.opsPerSec(), sm.cpuUsPerOp() / n.cpuUsPerOp()});
        }
      }
      String where = f("RF %d, %s %s", send.rf(), send.mix(), send.workload());
      if (!toBuild.isEmpty()) {
        System.out.printf(
            Locale.ROOT,
            "  send-index / build-index, %s: ops/s %s, CPU/op %s, backup index CPU %s, io amp %s,"
                + " net amp %s%n",
            where,
            ratio(toBuild, 0),
            ratio(toBuild, 1),
            ratio(toBuild, 2),
            ratio(toBuild, 3),
            ratio(toBuild, 4));
      }
      if (!toNone.isEmpty()) {
        System.out.printf(
            Locale.ROOT,
            "  send-index / none,        %s: ops/s %s, CPU/op %s%n",
            where,
            ratio(toNone, 0),
            ratio(toNone, 1));
      }
    }
  }

  /** "1.23x" for one round; "1.23x (1.01-1.40, 3 rounds)" for several, "!" when spread > diff. */
  private static String ratio(List<double[]> rounds, int index) {
    // A ratio of zeros (no backup index work in either mode) says nothing.
    double[] values =
        rounds.stream().mapToDouble(r -> r[index]).filter(Double::isFinite).sorted().toArray();
    if (values.length == 0) {
      return "-";
    }
    double median = median(values);
    if (values.length == 1) {
      return f("%.2fx", median);
    }
    double spread = values[values.length - 1] - values[0];
    return f(
        "%.2fx (%.2f-%.2f, %d rounds%s)",
        median,
        values[0],
        values[values.length - 1],
        values.length,
        spread > Math.abs(median - 1) ? "; spread larger than the difference" : "");
  }

  static double median(double[] sorted) {
    int n = sorted.length;
    if (n == 0) {
      return Double.NaN;
    }
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  private PhaseResult find(int round, String mode, int rf, String mix, String workload) {
    for (PhaseResult r : results) {
      if (r.round() == round
          && r.mode().equals(mode)
          && r.rf() == rf
          && r.mix().equals(mix)
          && r.workload().equals(workload)) {
        return r;
      }
    }
    return null;
  }

  /** The round of a case whose CPU per operation is the median of its rounds (for the chart). */
  private PhaseResult find(String mode, int rf, String mix, String workload) {
    List<PhaseResult> rounds = new ArrayList<>();
    for (PhaseResult r : results) {
      if (r.mode().equals(mode)
          && r.rf() == rf
          && r.mix().equals(mix)
          && r.workload().equals(workload)) {
        rounds.add(r);
      }
    }
    if (rounds.isEmpty()) {
      return null;
    }
    rounds.sort(java.util.Comparator.comparingDouble(r -> metrics(r).cpuUsPerOp()));
    return rounds.get((rounds.size() - 1) / 2);
  }

  /** Groups: each mix, phase and RF; series: the modes (none repeated in every RF group). */
  private void chart() throws IOException {
    List<String> groups = new ArrayList<>();
    List<PhaseResult[]> rows = new ArrayList<>();
    for (PhaseResult r : results) {
      if (r.mode().equals("none")) {
        continue;
      }
      String group = r.mix() + " " + r.workload() + " RF" + r.rf();
      if (groups.contains(group)) {
        continue;
      }
      groups.add(group);
      PhaseResult[] row = new PhaseResult[MODES.size()];
      row[0] = find("none", 1, r.mix(), r.workload());
      row[1] = find("build-index", r.rf(), r.mix(), r.workload());
      row[2] = find("send-index", r.rf(), r.mix(), r.workload());
      rows.add(row);
    }
    if (groups.isEmpty()) {
      return;
    }
    double[][] ops = new double[groups.size()][MODES.size()];
    double[][] cpu = new double[groups.size()][MODES.size()];
    double[][] backup = new double[groups.size()][MODES.size()];
    double[][] io = new double[groups.size()][MODES.size()];
    double[][] net = new double[groups.size()][MODES.size()];
    double[][] p99 = new double[groups.size()][MODES.size()];
    for (int g = 0; g < groups.size(); g++) {
      for (int s = 0; s < MODES.size(); s++) {
        PhaseResult r = rows.get(g)[s];
        Metrics m = r == null ? null : metrics(r);
        ops[g][s] = m == null ? Double.NaN : m.opsPerSec();
        cpu[g][s] = m == null ? Double.NaN : m.cpuUsPerOp();
        backup[g][s] = m == null ? Double.NaN : m.backupIndexCpuUsPerOp();
        io[g][s] = m == null ? Double.NaN : m.ioAmplification();
        net[g][s] = m == null ? Double.NaN : m.networkAmplification();
        YcsbPhase.Operation write =
            r == null
                ? null
                : r.ycsb().operations().getOrDefault("INSERT", r.ycsb().operations().get("UPDATE"));
        p99[g][s] = write == null ? Double.NaN : write.p99();
      }
    }
    BarChart.write(
        options.outDir().resolve("replication.png"),
        f(
            "Replication: none, Build-Index, Send-Index; 3 servers, %d regions, YCSB over %s",
            options.regions(),
            options.fabric().equals("shm") ? "fabric shm" : "TCP, replication streams"),
        MODES,
        List.of(
            new BarChart.Panel("Throughput", "ops/s", groups, ops),
            new BarChart.Panel("Server CPU per operation", "us/op", groups, cpu),
            new BarChart.Panel("Backup index upkeep CPU per operation", "us/op", groups, backup),
            new BarChart.Panel("Device I/O amplification", "x", groups, io),
            new BarChart.Panel("Network amplification", "x", groups, net),
            new BarChart.Panel("Write p99 latency", "us", groups, p99)),
        3);
  }

  static String f(String format, Object... values) {
    return String.format(Locale.ROOT, format, values);
  }
}
