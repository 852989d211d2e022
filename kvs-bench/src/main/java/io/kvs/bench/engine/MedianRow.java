package io.kvs.bench.engine;

import io.kvs.tools.Latencies;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * One system's phase over the rounds of a repeated run: the median of each figure across rounds,
 * and the spread of the throughput.
 *
 * @param rounds how many rounds ran it
 * @param opsPerSecMin the slowest round's throughput
 * @param opsPerSecMax the fastest round's
 */
public record MedianRow(
    String system,
    KvMix mix,
    Workload workload,
    boolean truncated,
    double opsPerSec,
    double cpuMicrosPerOp,
    double ioAmplification,
    double spaceAmplification,
    Latencies.Summary latency,
    int rounds,
    double opsPerSecMin,
    double opsPerSecMax)
    implements PhaseRow {

  /** One row per mix, workload and system of {@code phases}, in the order they first appear. */
  public static List<PhaseRow> of(List<? extends PhaseRow> phases) {
    Map<String, List<PhaseRow>> groups = new LinkedHashMap<>();
    for (PhaseRow phase : phases) {
      groups
          .computeIfAbsent(
              phase.mix() + "|" + phase.workload() + "|" + phase.system(), k -> new ArrayList<>())
          .add(phase);
    }
    List<PhaseRow> rows = new ArrayList<>();
    for (List<PhaseRow> group : groups.values()) {
      PhaseRow first = group.get(0);
      rows.add(
          new MedianRow(
              first.system(),
              first.mix(),
              first.workload(),
              group.stream().anyMatch(PhaseRow::truncated),
              median(group, PhaseRow::opsPerSec),
              median(group, PhaseRow::cpuMicrosPerOp),
              median(group, PhaseRow::ioAmplification),
              median(group, PhaseRow::spaceAmplification),
              new Latencies.Summary(
                  (long) median(group, r -> r.latency().count()),
                  median(group, r -> r.latency().p50Micros()),
                  median(group, r -> r.latency().p99Micros()),
                  median(group, r -> r.latency().p999Micros()),
                  median(group, r -> r.latency().maxMicros())),
              group.size(),
              group.stream().mapToDouble(PhaseRow::opsPerSec).min().orElse(Double.NaN),
              group.stream().mapToDouble(PhaseRow::opsPerSec).max().orElse(Double.NaN)));
    }
    return rows;
  }

  /**
   * The median of the finite values (the mean of the middle two for an even count); NaN if none.
   */
  static double median(List<PhaseRow> rows, ToDoubleFunction<PhaseRow> figure) {
    double[] values = rows.stream().mapToDouble(figure).filter(Double::isFinite).toArray();
    if (values.length == 0) {
      return Double.NaN;
    }
    Arrays.sort(values);
    int middle = values.length / 2;
    return values.length % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
  }
}
