package io.kvs.bench.replication;

import io.kvs.bench.replication.ReplicationBenchmark.PhaseResult;
import io.kvs.bench.replication.ReplicationReport.Metrics;
import io.kvs.tools.TextTable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.ToDoubleFunction;

/**
 * The seeds' breakdown of server CPU per operation (Tebis Table 3: cycles/op in Load A, SD, by
 * component, all server threads), from this run's measurements at this machine's clock, beside the
 * published numbers. Printed for every phase where Build-Index and Send-Index both ran; with
 * several rounds each cell is the median over the rounds.
 *
 * <p>How our counters map onto the paper's components:
 *
 * <ul>
 *   <li>insert in L0: the primaries' engine inserts (log append and L0, sampled one write in 16),
 *       plus under Build-Index the backups applying the records they receive (their own log, L0 and
 *       sync);
 *   <li>KV log replication: the replication threads and the backups persisting log copies;
 *   <li>compaction: compaction threads (every replica's under Build-Index, primaries' only under
 *       Send-Index);
 *   <li>send index: the primaries queueing and sending index segments and levels;
 *   <li>rewrite index: Send-Index backups rewriting and installing shipped segments;
 *   <li>reply and other: everything else: polling, request decoding, replies, scheduling (the
 *       paper's "server to client reply" and "other" together: replies are not timed apart).
 * </ul>
 */
final class Table3Breakdown {
  private static final String[] COMPONENTS = {
    "insert in L0",
    "KV log replication",
    "compaction",
    "send index",
    "rewrite index",
    "reply and other",
    "total",
    "compaction + send + rewrite index"
  };

  /**
   * Tebis Table 3 (Send-Index RF 2, Load A, SD, 100 M pairs): Build-Index, Send-Index cycles/op.
   */
  private static final double[][] TEBIS = {
    {5031, 2730},
    {1170, 1140},
    {9640, 2505},
    {0, 1770},
    {0, 1350},
    {740 + 22419, 740 + 19765},
    {39000, 30000},
    {9640, 2505 + 1770 + 1350}
  };

  private final List<PhaseResult> results;

  Table3Breakdown(List<PhaseResult> results) {
    this.results = results;
  }

  void print() {
    double mhz = cpuMhz();
    Set<String> printed = new LinkedHashSet<>();
    for (PhaseResult r : results) {
      String key = r.rf() + " " + r.mix() + " " + r.workload();
      if (r.mode().equals("none") || !printed.add(key)) {
        continue;
      }
      List<Metrics> build = rounds("build-index", r);
      List<Metrics> send = rounds("send-index", r);
      if (build.isEmpty() || send.isEmpty()) {
        continue;
      }
      System.out.println();
      System.out.printf(
          Locale.ROOT,
          "Tebis Table 3 breakdown, RF %d, %s %s: cycles/op at %s (median of %d and %d"
              + " rounds), beside the paper's (RF 2, Load A, SD, 100 M pairs)%n",
          r.rf(),
          r.mix(),
          r.workload(),
          mhz > 0 ? String.format(Locale.ROOT, "%.0f MHz", mhz) : "an unknown clock (us/op)",
          build.size(),
          send.size());
      TextTable table =
          new TextTable(
              1,
              "component",
              "build-index",
              "send-index",
              "reduction",
              "Tebis build-index",
              "Tebis send-index",
              "Tebis reduction");
      double scale = mhz > 0 ? mhz : 1;
      for (int c = 0; c < COMPONENTS.length; c++) {
        double b = median(build, component(c, false)) * scale;
        double s = median(send, component(c, true)) * scale;
        table.row(
            COMPONENTS[c],
            String.format(Locale.ROOT, "%,.0f", b),
            String.format(Locale.ROOT, "%,.0f", s),
            reduction(b, s),
            String.format(Locale.ROOT, "%,.0f", TEBIS[c][0]),
            String.format(Locale.ROOT, "%,.0f", TEBIS[c][1]),
            reduction(TEBIS[c][0], TEBIS[c][1]));
      }
      System.out.print(table);
    }
  }

  private List<Metrics> rounds(String mode, PhaseResult like) {
    List<Metrics> found = new ArrayList<>();
    for (PhaseResult r : results) {
      if (r.mode().equals(mode)
          && r.rf() == like.rf()
          && r.mix().equals(like.mix())
          && r.workload().equals(like.workload())) {
        found.add(ReplicationReport.metrics(r));
      }
    }
    return found;
  }

  /** Microseconds per operation of component {@code c} (the order of {@link #COMPONENTS}). */
  static ToDoubleFunction<Metrics> component(int c, boolean sendIndex) {
    return switch (c) {
      case 0 -> m -> m.insertUs() + (sendIndex ? 0 : m.backupIndexUs());
      case 1 -> Metrics::logReplicationUs;
      case 2 -> Metrics::compactionUs;
      case 3 -> Metrics::indexShippingUs;
      case 4 -> m -> sendIndex ? m.backupIndexUs() : 0;
      case 5 ->
          m -> {
            double named = 0;
            for (int i = 0; i < 5; i++) {
              named += component(i, sendIndex).applyAsDouble(m);
            }
            return Math.max(0, m.cpuUsPerOp() - named);
          };
      case 6 -> Metrics::cpuUsPerOp;
      // The paper's compaction comparison (41.6 % less): Send-Index's compactions include
      // shipping and rewriting the index.
      default ->
          m ->
              component(2, sendIndex).applyAsDouble(m)
                  + component(3, sendIndex).applyAsDouble(m)
                  + component(4, sendIndex).applyAsDouble(m);
    };
  }

  private static double median(List<Metrics> rounds, ToDoubleFunction<Metrics> of) {
    return ReplicationReport.median(rounds.stream().mapToDouble(of).sorted().toArray());
  }

  private static String reduction(double build, double send) {
    if (build <= 0) {
      return "-";
    }
    return String.format(Locale.ROOT, "%.1f%%", 100 * (build - send) / build);
  }

  /** This machine's clock from /proc/cpuinfo (the first core's current MHz), 0 if unknown. */
  private static double cpuMhz() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("cpu MHz")) {
          return Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
        }
      }
    } catch (IOException | NumberFormatException e) {
      return 0;
    }
    return 0;
  }
}
