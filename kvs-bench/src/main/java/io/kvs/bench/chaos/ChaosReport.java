package io.kvs.bench.chaos;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvs.bench.history.Verdict;
import io.kvs.tools.JsonLine;
import io.kvs.tools.TextTable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The campaign's result: the timeline of faults and recoveries, the checks and the verdict, printed
 * and written as one JSON object ({@code chaos.json}; docs/OPERATIONS.md "Chaos campaign" lists the
 * fields).
 */
final class ChaosReport {
  /** Everything the report is made of. */
  record Inputs(
      ChaosOptions options,
      ChaosCluster.Layout layout,
      List<FaultRecord> faults,
      long originNanos,
      long endNanos,
      int operations,
      long operationsOk,
      long writesAcknowledged,
      Verdict verdict,
      Unavailability unavailability,
      List<String> crashes,
      boolean verifyPassed,
      String verifySummary,
      List<String> failures,
      String chart,
      MachineProbe machine,
      ZooKeeperProbe zookeeper) {}

  private final Inputs in;

  ChaosReport(Inputs inputs) {
    this.in = inputs;
  }

  /** The timeline as a table, one line per fault. */
  String timeline() {
    TextTable table =
        new TextTable(
            4, "#", "kind", "victim", "outcome", "at s", "healed s", "full s", "to full ms");
    for (FaultRecord fault : in.faults()) {
      table.row(
          (fault.overlapping ? "+" : "") + fault.number,
          fault.kind().label,
          fault.victim(),
          fault.errors().isEmpty() ? (fault.ran() ? "ok" : "not run") : "FAILED",
          seconds(fault.injectedNanos()),
          seconds(fault.healedNanos()),
          seconds(fault.fullStrengthNanos()),
          fault.healedNanos() == FaultRecord.NOT_YET
                  || fault.fullStrengthNanos() == FaultRecord.NOT_YET
              ? "-"
              : Long.toString((fault.fullStrengthNanos() - fault.healedNanos()) / 1_000_000));
    }
    StringBuilder out = new StringBuilder(table.toString());
    for (FaultRecord fault : in.faults()) {
      for (String note : fault.notes()) {
        out.append(String.format("  %d %s: %s%n", fault.number, fault.kind().label, note));
      }
      for (String error : fault.errors()) {
        out.append(String.format("  %d %s: ERROR %s%n", fault.number, fault.kind().label, error));
      }
    }
    return out.toString();
  }

  /**
   * Every stretch in which a region served no one longer than the listed bound, with the faults on
   * (or not yet recovered from) during it.
   */
  String stretches() {
    List<Unavailability.Stretch> over = in.unavailability().over();
    StringBuilder out =
        new StringBuilder(
            String.format(
                Locale.ROOT,
                "stretches in which a region served no one for more than %d ms: %d%n",
                ChaosCampaign.unavailabilityBound(in.options()),
                over.size()));
    for (Unavailability.Stretch stretch : over) {
      out.append(
          String.format(
              Locale.ROOT,
              "  region %d at %s s for %d ms, faults %s; machine: %s; ZooKeeper answered in"
                  + " %d ms at worst%n",
              stretch.region(),
              seconds(stretch.fromNanos()),
              stretch.millis(),
              faultsDuring(stretch.fromNanos(), stretch.toNanos()),
              in.machine().during(stretch.fromNanos(), stretch.toNanos()).describe(),
              in.zookeeper().longestWaitMillis(stretch.fromNanos(), stretch.toNanos())));
    }
    List<MachineProbe.Stall> stalls = in.machine().stalls();
    out.append(
        String.format(
            Locale.ROOT,
            "machine stalls (the campaign's probe woke %d ms or more late): %d%s%n",
            MachineProbe.STALL_NANOS / 1_000_000,
            stalls.size(),
            stalls.isEmpty()
                ? ""
                : ", longest "
                    + stalls.stream().mapToLong(MachineProbe.Stall::lateMillis).max().orElse(0)
                    + " ms"));
    appendStalls(out, stalls);
    List<MachineProbe.Stall> slow = in.zookeeper().stalls(MachineProbe.STALL_NANOS);
    out.append(
        String.format(
            Locale.ROOT,
            "ZooKeeper stalls (the campaign's own session waited %d ms or more for an answer):"
                + " %d%n",
            MachineProbe.STALL_NANOS / 1_000_000,
            slow.size()));
    appendStalls(out, slow);
    return out.toString();
  }

  private void appendStalls(StringBuilder out, List<MachineProbe.Stall> stalls) {
    for (MachineProbe.Stall stall : stalls) {
      out.append(
          String.format(
              Locale.ROOT,
              "  %d ms until %s s, faults %s%n",
              stall.lateMillis(),
              seconds(stall.nanos()),
              faultsDuring(stall.nanos() - stall.lateMillis() * 1_000_000, stall.nanos())));
    }
  }

  private List<String> faultsDuring(long from, long to) {
    List<String> faults = new ArrayList<>();
    for (FaultRecord fault : in.faults()) {
      if (fault.ran() && fault.injectedNanos() <= to && from <= end(fault)) {
        faults.add(fault.number + " " + fault.kind().label + " " + fault.victim());
      }
    }
    return faults;
  }

  private JsonLine machine(long fromNanos, long toNanos) {
    MachineProbe.During during = in.machine().during(fromNanos, toNanos);
    return new JsonLine()
        .put("probe_late_max_ms", during.lateMaxMillis())
        .put("probe_late_ms", during.lateMillis())
        .put("steal_ms", during.stealMillis())
        .put("io_some_ms", during.ioSomeMillis())
        .put("io_full_ms", during.ioFullMillis())
        .put("cpu_wait_ms", during.cpuMillis())
        .put("campaign_gc_ms", during.gcMillis())
        .put("zookeeper_wait_max_ms", in.zookeeper().longestWaitMillis(fromNanos, toNanos));
  }

  /** The longest stretch without service less the time the machine stood still in it. */
  private long lessMachineStalls() {
    return in.unavailability().worstMillisLess(in.machine()::stoodStillMillis);
  }

  private List<Object> stallsJson(List<MachineProbe.Stall> stalls) {
    List<Object> json = new ArrayList<>();
    for (MachineProbe.Stall stall : stalls) {
      json.add(
          new JsonLine().put("until_s", secondsValue(stall.nanos())).put("ms", stall.lateMillis()));
    }
    return json;
  }

  /** The verdict: the numbers, then PASSED or every failed check. */
  String verdict() {
    Unavailability.Worst worst = in.unavailability().worst();
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            Locale.ROOT,
            "seed %d, %s profile: %d faults (%s) in %.0f s%n",
            in.options().seed(),
            in.options().quick() ? "quick" : "full",
            ran(),
            byKind(),
            (in.endNanos() - in.originNanos()) / 1e9));
    out.append(
        String.format(
            Locale.ROOT,
            "operations %d (%d succeeded), lost acknowledged writes %d, linearizable %s (%s),"
                + " max unavailable %d ms%s (%d ms less the machine's stalls, not checked),"
                + " crashes not injected %d, verify %s%n",
            in.operations(),
            in.operationsOk(),
            in.verdict().lostWrites().size(),
            in.verdict().isLinearizable(),
            in.verdict().result(),
            worst == null ? 0 : worst.millis(),
            worst == null
                ? ""
                : " (region " + worst.region() + " at " + seconds(worst.fromNanos()) + " s)",
            lessMachineStalls(),
            in.crashes().size(),
            in.verifyPassed() ? "passed" : "FAILED"));
    if (in.failures().isEmpty()) {
      out.append("verdict: PASSED\n");
    } else {
      out.append("verdict: FAILED\n");
      in.failures().forEach(failure -> out.append("  - ").append(failure).append('\n'));
    }
    out.append("replay: ").append(in.options().replay()).append('\n');
    return out.toString();
  }

  /** Writes the JSON object to {@code file}. */
  void writeJson(Path file) throws IOException {
    Unavailability.Worst worst = in.unavailability().worst();
    Map<String, Object> byRegion = new LinkedHashMap<>();
    in.unavailability()
        .byRegion()
        .forEach((region, w) -> byRegion.put(Long.toString(region), w.millis()));
    List<Object> over = new ArrayList<>();
    for (Unavailability.Stretch stretch : in.unavailability().over()) {
      over.add(
          new JsonLine()
              .put("region", stretch.region())
              .put("at_s", secondsValue(stretch.fromNanos()))
              .put("ms", stretch.millis())
              .put(
                  "machine_stood_still_ms",
                  in.machine().stoodStillMillis(stretch.fromNanos(), stretch.toNanos()))
              .put("faults", faultsDuring(stretch.fromNanos(), stretch.toNanos()))
              .put("machine", machine(stretch.fromNanos(), stretch.toNanos())));
    }
    List<Object> stalls = stallsJson(in.machine().stalls());
    List<Object> zookeeperStalls = stallsJson(in.zookeeper().stalls(MachineProbe.STALL_NANOS));
    List<Object> timeline = new ArrayList<>();
    for (FaultRecord fault : in.faults()) {
      timeline.add(
          new JsonLine()
              .put("number", fault.number)
              .put("step", fault.step)
              .put("kind", fault.kind().label)
              .put("target", fault.planned.target().toString())
              .put("victim", fault.victim())
              .put("overlapping", fault.overlapping)
              .put("hold_ms", fault.planned.holdMillis())
              .put("injected_s", secondsValue(fault.injectedNanos()))
              .put("healed_s", secondsValue(fault.healedNanos()))
              .put("full_strength_s", secondsValue(fault.fullStrengthNanos()))
              .put("notes", fault.notes())
              .put("errors", fault.errors()));
    }
    JsonLine json =
        new JsonLine()
            .put("seed", in.options().seed())
            .put("profile", in.options().quick() ? "quick" : "full")
            .put("minutes", in.options().quick() ? null : in.options().minutes())
            .put("replay", in.options().replay())
            .put("kinds", in.options().kinds().stream().map(kind -> kind.label).toList())
            .put("passed", in.failures().isEmpty())
            .put("failures", in.failures())
            .put("duration_s", round((in.endNanos() - in.originNanos()) / 1e9))
            .put("faults", ran())
            .put(
                "faults_overlapping",
                in.faults().stream().filter(f -> f.overlapping && f.ran()).count())
            .put("by_kind", byKind())
            .put("operations", in.operations())
            .put("operations_ok", in.operationsOk())
            .put("writes_acknowledged", in.writesAcknowledged())
            .put("lost_acked_writes", in.verdict().lostWrites().size())
            .put("linearizable", in.verdict().isLinearizable())
            .put("linearizability", in.verdict().result().name())
            .put("keys", in.verdict().keys())
            .put("max_unavailable_ms", worst == null ? 0 : worst.millis())
            .put("max_unavailable_less_machine_stalls_ms", lessMachineStalls())
            .put("max_unavailable_region", worst == null ? null : worst.region())
            .put("max_unavailable_at_s", worst == null ? null : secondsValue(worst.fromNanos()))
            .put("max_unavailable_during", worst == null ? List.of() : during(worst.fromNanos()))
            .put("unavailable_ms_by_region", byRegion)
            .put("unavailable_listed_over_ms", ChaosCampaign.unavailabilityBound(in.options()))
            .put("unavailable_over", over)
            .put("machine_stalls", stalls)
            .put("zookeeper_stalls", zookeeperStalls)
            .put("crashes_not_injected", in.crashes().size())
            .put("crashes", in.crashes())
            .put("verify_passed", in.verifyPassed())
            .put("verify", in.verifySummary())
            .put(
                "cluster",
                new JsonLine()
                    .put("servers", in.layout().servers())
                    .put("masters", in.layout().masters())
                    .put("regions", in.layout().regions())
                    .put("replication", in.layout().replication())
                    .put("start_options", in.layout().startOptions()))
            .put("clients", in.options().clients())
            .put("keys_loaded", in.options().keys())
            .put("chart", in.chart())
            .put("timeline", timeline);
    ObjectMapper mapper = new ObjectMapper();
    String pretty =
        mapper
            .writerWithDefaultPrettyPrinter()
            .writeValueAsString(mapper.readTree(json.toString()));
    Files.createDirectories(file.toAbsolutePath().getParent());
    Files.writeString(file, pretty + "\n", StandardCharsets.UTF_8);
  }

  /** Faults injected, by kind label (every kind scheduled listed, 0 if it never ran). */
  Map<String, Object> byKind() {
    Map<String, Object> counts = new LinkedHashMap<>();
    for (FaultKind kind : in.options().kinds()) {
      counts.put(kind.label, in.faults().stream().filter(f -> f.kind() == kind && f.ran()).count());
    }
    return counts;
  }

  /** The faults (numbers) that were on, or not yet recovered from, at {@code nanos}. */
  List<Integer> during(long nanos) {
    List<Integer> numbers = new ArrayList<>();
    for (FaultRecord fault : in.faults()) {
      if (fault.ran() && fault.injectedNanos() <= nanos && nanos <= end(fault)) {
        numbers.add(fault.number);
      }
    }
    return numbers;
  }

  /** When {@code fault} was over: at full strength again, else healed, else the run's end. */
  private long end(FaultRecord fault) {
    return fault.fullStrengthNanos() != FaultRecord.NOT_YET
        ? fault.fullStrengthNanos()
        : fault.healedNanos() != FaultRecord.NOT_YET ? fault.healedNanos() : in.endNanos();
  }

  private long ran() {
    return in.faults().stream().filter(FaultRecord::ran).count();
  }

  private String seconds(long nanos) {
    return nanos == FaultRecord.NOT_YET
        ? "-"
        : String.format(Locale.ROOT, "%.1f", (nanos - in.originNanos()) / 1e9);
  }

  private Double secondsValue(long nanos) {
    return nanos == FaultRecord.NOT_YET ? null : round((nanos - in.originNanos()) / 1e9);
  }

  private static double round(double value) {
    return Math.round(value * 10) / 10.0;
  }
}
