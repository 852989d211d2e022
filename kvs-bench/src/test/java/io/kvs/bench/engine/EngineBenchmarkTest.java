package io.kvs.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EngineBenchmarkTest {
  private static final List<String> REQUIRED_FIELDS =
      List.of(
          "\"system\":",
          "\"mix\":",
          "\"workload\":",
          "\"ops_per_sec\":",
          "\"cpu_us_per_op\":",
          "\"io_amplification\":",
          "\"space_amplification\":",
          "\"p50_us\":",
          "\"p99_us\":",
          "\"p999_us\":");

  @Test
  void quickProfileIsTheIssuesSubset() {
    EngineBenchmark.Config quick = EngineBenchmark.parse(new String[] {"--quick"});
    assertThat(quick.profile()).isEqualTo("quick");
    assertThat(quick.mixes()).containsExactly(KvMix.SD, KvMix.MD);
    assertThat(quick.workloads())
        .containsExactly(
            Workload.LOAD_A,
            Workload.RUN_A,
            Workload.RUN_C,
            Workload.RUN_E,
            Workload.PUTS_PEAK,
            Workload.PUTS_50,
            Workload.PUTS_90);
    assertThat(quick.systems()).containsExactly(SystemKind.values());
    // The cache is a quarter of the dataset.
    assertThat(quick.datasetBytes()).isEqualTo(4 * quick.settings().cacheBytes());

    EngineBenchmark.Config full = EngineBenchmark.parse(new String[0]);
    assertThat(full.profile()).isEqualTo("full");
    assertThat(full.mixes()).containsExactly(KvMix.values());
    assertThat(full.workloads()).containsExactly(Workload.values());
  }

  @Test
  void optionsOverrideTheProfileAndLoadAlwaysComesFirst() {
    EngineBenchmark.Config config =
        EngineBenchmark.parse(
            new String[] {"--quick", "--workloads", "runE,runC", "--threads=2", "--out-dir", "x"});
    assertThat(config.profile()).isEqualTo("quick+custom");
    assertThat(config.workloads()).containsExactly(Workload.LOAD_A, Workload.RUN_C, Workload.RUN_E);
    assertThat(config.threads()).isEqualTo(2);
    // An open loop brings the phase that measures its peak along.
    assertThat(EngineBenchmark.parse(new String[] {"--workloads", "puts90"}).workloads())
        .containsExactly(Workload.LOAD_A, Workload.PUTS_PEAK, Workload.PUTS_90);
    assertThat(EngineBenchmark.parse(new String[] {"--quick", "--out-dir", "x"}).profile())
        .isEqualTo("quick");
    assertThatThrownBy(() -> EngineBenchmark.parse(new String[] {"--bogus", "1"}))
        .hasMessageContaining("unknown option --bogus");
    // Open loops offer shares of each system's own peak, or of one given for all.
    EngineBenchmark.Config measured = EngineBenchmark.parse(new String[] {"--workloads", "puts50"});
    assertThat(measured.rateFor(Workload.PUTS_50, 300_000)).isEqualTo(150_000);
    EngineBenchmark.Config fixed =
        EngineBenchmark.parse(new String[] {"--workloads", "puts50", "--peak-ops", "290000"});
    assertThat(fixed.rateFor(Workload.PUTS_50, 300_000)).isEqualTo(145_000);
    assertThat(fixed.rateFor(Workload.PUTS_90, 0)).isEqualTo(261_000);
    assertThat(fixed.rateFor(Workload.RUN_A, 300_000)).isZero();
  }

  @Test
  void tinyRunOfEverySystemWritesJsonLinesTableAndChart(@TempDir Path directory) throws Exception {
    EngineBenchmark.Config config =
        EngineBenchmark.parse(
            new String[] {
              "--mixes", "SD",
              "--api", "jvm",
              "--workloads", "loadA,runA,runC,runD,runE,puts50",
              "--open-seconds", "1",
              "--records", "3000",
              "--operations", "2000",
              "--scan-operations", "300",
              "--threads", "2",
              "--cache-mib", "8",
              "--l0-mib", "1",
              "--drain-quiet-ms", "200",
              "--drain-limit-seconds", "10",
              "--data-dir", directory.resolve("data").toString(),
              "--out-dir", directory.resolve("out").toString()
            });
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    List<PhaseResult> results =
        EngineBenchmark.run(config, new PrintStream(printed, true, StandardCharsets.UTF_8));

    assertThat(results).hasSize(4 * 7);
    double peak = 0;
    for (PhaseResult result : results) {
      if (result.workload().timed()) {
        // Runs for the open loops' length (a second), as many puts as fit in it.
        assertThat(result.truncated()).isFalse();
        assertThat(result.operations()).isPositive();
        assertThat(result.nanos()).isBetween(1_000_000_000L, 5_000_000_000L);
        peak = result.opsPerSec(); // the same system's, as results come system by system
      } else {
        assertThat(result.operations())
            .isEqualTo(config.operationsFor(result.workload(), result.mix(), peak));
      }
      assertThat(result.notFound()).as("reads of existing keys").isZero();
    }
    // The open loop offers half of the sustained put rate for a second, and keeps to it.
    assertThat(results)
        .filteredOn(r -> r.workload() == Workload.PUTS_50)
        .allSatisfy(
            r -> {
              assertThat(r.offeredOpsPerSec()).isPositive();
              assertThat(r.opsPerSec()).isLessThan(1.5 * r.offeredOpsPerSec());
            });
    List<String> lines = Files.readAllLines(directory.resolve("out/engine.json"));
    assertThat(lines).hasSize(28);
    for (String line : lines) {
      assertThat(line).startsWith("{").endsWith("}");
      for (String field : REQUIRED_FIELDS) {
        assertThat(line).contains(field);
      }
      assertThat(line).contains("\"latency_by_op\":{").contains("\"records\":");
    }
    Set<String> systems =
        lines.stream()
            .map(line -> line.replaceAll("^\\{\"system\":\"([a-z0-9-]+)\".*$", "$1"))
            .collect(Collectors.toSet());
    assertThat(systems).containsExactlyInAnyOrder("kvs", "rocksdb", "rocksdb-wal50", "blobdb");
    assertThat(lines)
        .anyMatch(line -> line.contains("\"workload\":\"loadA\""))
        .anyMatch(line -> line.contains("\"workload\":\"runE\""));

    BufferedImage chart = ImageIO.read(directory.resolve("out/engine.png").toFile());
    assertThat(chart).isNotNull();
    assertThat(chart.getWidth()).isGreaterThan(500);

    String table = printed.toString(StandardCharsets.UTF_8);
    assertThat(table)
        .contains("kvs/rocksdb")
        .contains("kvs/rocksdb-wal50")
        .contains("kvs/blobdb")
        .contains("runD");
    // The systems' directories are removed after their run unless --keep-data.
    assertThat(directory.resolve("data/SD")).doesNotExist();
  }

  @Test
  void nativeRunsReportBesideTheJvmOnesAndCompareWithEachOther(@TempDir Path directory)
      throws Exception {
    EngineBenchmark.Config config =
        EngineBenchmark.parse(
            new String[] {
              "--mixes", "SD",
              "--systems", "kvs,rocksdb-wal50",
              "--workloads", "loadA,runA,runE,puts50",
              "--open-seconds", "1",
              "--records", "3000",
              "--operations", "2000",
              "--scan-operations", "300",
              "--threads", "2",
              "--cache-mib", "8",
              "--l0-mib", "1",
              "--drain-quiet-ms", "200",
              "--drain-limit-seconds", "10",
              "--data-dir", directory.resolve("data").toString(),
              "--out-dir", directory.resolve("out").toString()
            });
    assertThat(config.apis()).containsExactly(EngineApi.JVM, EngineApi.NATIVE);
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    List<PhaseResult> jvm =
        EngineBenchmark.run(config, new PrintStream(printed, true, StandardCharsets.UTF_8));

    // JVM: loadA, runA, runE, putsPeak, puts50; native: loadA, runA, runE (no open loops).
    assertThat(jvm).hasSize(2 * 5);
    List<PhaseLine> nativePhases =
        Files.readAllLines(directory.resolve("out/engine.json")).stream()
            .filter(line -> line.contains("\"api\":\"native\""))
            .map(PhaseLine::parse)
            .toList();
    assertThat(nativePhases)
        .extracting(phase -> phase.system() + " " + phase.workload().id())
        .containsExactly(
            "kvs-native loadA",
            "kvs-native runA",
            "kvs-native runE",
            "rocksdb-wal50-native loadA",
            "rocksdb-wal50-native runA",
            "rocksdb-wal50-native runE");
    for (PhaseLine phase : nativePhases) {
      assertThat(phase.opsPerSec()).isPositive();
      assertThat(phase.cpuMicrosPerOp()).isPositive();
      assertThat(phase.latency().count())
          .isEqualTo(
              phase.workload() == Workload.LOAD_A
                  ? 3000
                  : phase.workload() == Workload.RUN_E ? 300 : 2000);
      assertThat(phase.json()).contains("\"not_found\":0,").contains("\"profile\":\"full+custom\"");
    }
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("kvs-native/rocksdb-wal50-native")
        .contains("kvs/rocksdb-wal50");
    assertThat(directory.resolve("data/SD")).doesNotExist();
  }

  @Test
  void nativeLinesAreReadByTheirTopLevelFieldsAndBadOnesRefused() {
    PhaseLine phase =
        PhaseLine.parse(
            "{\"api\":\"native\",\"system\":\"kvs-native\",\"mix\":\"MD\","
                + "\"workload\":\"runC\",\"ops_per_sec\":1234.5,\"cpu_us_per_op\":2,"
                + "\"io_amplification\":null,\"space_amplification\":1.5,\"p50_us\":3,"
                + "\"p99_us\":40,\"p999_us\":500,\"max_us\":6000,\"operations\":10,"
                + "\"truncated\":false,\"latency_by_op\":{\"read\":{\"p50_us\":99}},"
                + "\"engine\":{\"files_per_level\":\"L0:1 L1:2\"}}");
    assertThat(phase.system()).isEqualTo("kvs-native");
    assertThat(phase.mix()).isEqualTo(KvMix.MD);
    assertThat(phase.workload()).isEqualTo(Workload.RUN_C);
    assertThat(phase.opsPerSec()).isEqualTo(1234.5);
    assertThat(phase.ioAmplification()).isNaN();
    // The top-level p50, not the one nested in latency_by_op.
    assertThat(phase.latency().p50Micros()).isEqualTo(3);
    assertThat(phase.latency().count()).isEqualTo(10);
    assertThatThrownBy(() -> PhaseLine.parse("{\"system\":\"kvs-native\"}"))
        .hasMessageContaining("missing field");
    assertThatThrownBy(() -> PhaseLine.parse("{\"system\":{\"unbalanced\":1}"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> PhaseLine.parse("not json")).hasMessageContaining("not a JSON object");
  }

  @Test
  void standardProfileIsLargeRepeatedAndItsPartsDoNotMakeItCustom() {
    EngineBenchmark.Config standard = EngineBenchmark.parse(new String[] {"--standard"});
    assertThat(standard.profile()).isEqualTo("standard");
    assertThat(standard.mixes()).containsExactly(KvMix.values());
    assertThat(standard.workloads())
        .containsExactly(
            Workload.LOAD_A,
            Workload.RUN_A,
            Workload.RUN_B,
            Workload.RUN_C,
            Workload.RUN_D,
            Workload.RUN_E);
    assertThat(standard.datasetBytes())
        .isEqualTo(4L << 30)
        .isEqualTo(8 * standard.settings().cacheBytes());
    assertThat(standard.rounds()).isEqualTo(3);
    assertThat(standard.repeated()).isTrue();
    assertThat(standard.resultsName()).isEqualTo("engine-standard");
    EngineBenchmark.Config part =
        EngineBenchmark.parse(
            new String[] {"--standard", "--mixes", "SD", "--api", "native", "--rounds", "1"});
    assertThat(part.profile()).isEqualTo("standard");
    assertThat(part.repeated()).isTrue();
    assertThat(EngineBenchmark.parse(new String[] {"--standard", "--records", "10"}).profile())
        .isEqualTo("standard+custom");
    assertThatThrownBy(() -> EngineBenchmark.parse(new String[] {"--standard", "--quick"}))
        .hasMessageContaining("pick one");
  }

  @Test
  void aRepeatedRunResumesWhatAnEarlierPartLeftAndRefusesAnotherConfiguration(
      @TempDir Path directory) throws Exception {
    List<String> options =
        List.of(
            "--rounds", "2",
            "--mixes", "SD",
            "--systems", "kvs,rocksdb-wal50",
            "--api", "native",
            "--workloads", "loadA,runC",
            "--records", "2000",
            "--operations", "1000",
            "--threads", "2",
            "--cache-mib", "8",
            "--l0-mib", "1",
            "--drain-quiet-ms", "200",
            "--drain-limit-seconds", "10",
            "--data-dir", directory.resolve("data").toString(),
            "--out-dir", directory.resolve("out").toString());
    EngineBenchmark.Config config = EngineBenchmark.parse(options.toArray(new String[0]));
    Path results = directory.resolve("out/engine.json");
    EngineBenchmark.run(
        config, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    List<String> lines = Files.readAllLines(results);
    // 2 rounds x 2 systems x (loadA, runC), each line with its round and configuration.
    assertThat(lines).hasSize(8);
    assertThat(lines.stream().map(PhaseLine::parse).map(PhaseLine::round))
        .containsOnly(1, 2)
        .filteredOn(round -> round == 2)
        .hasSize(4);
    assertThat(lines).allMatch(line -> line.contains("\"configuration\":\"cache=8MiB l0=1MiB"));

    // A part cut short: the last run lost its last phase. Resuming runs it alone again.
    String cut = lines.get(lines.size() - 1);
    Files.write(results, lines.subList(0, lines.size() - 1));
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    EngineBenchmark.run(config, new PrintStream(printed, true, StandardCharsets.UTF_8));
    String report = printed.toString(StandardCharsets.UTF_8);
    assertThat(report.lines().filter(line -> line.contains("done in an earlier part"))).hasSize(3);
    List<String> resumed = Files.readAllLines(results);
    assertThat(resumed).hasSize(8).containsAll(lines.subList(0, 6));
    PhaseLine rerun = PhaseLine.parse(resumed.get(7));
    assertThat(rerun.system() + " " + rerun.round() + " " + rerun.workload().id())
        .isEqualTo(PhaseLine.parse(cut).system() + " 2 runC");
    // Medians over both rounds, with the range and the number of rounds.
    assertThat(report).containsPattern("runC +kvs-native +[0-9,]+ \\([0-9,]+-[0-9,]+, 2\\)");
    assertThat(report).contains("kvs-native/rocksdb-wal50-native");

    // Another configuration is not mixed in: refused, unless started over.
    List<String> other = new java.util.ArrayList<>(options);
    other.set(other.indexOf("2000"), "3000");
    EngineBenchmark.Config changed = EngineBenchmark.parse(other.toArray(new String[0]));
    assertThatThrownBy(
            () ->
                EngineBenchmark.run(
                    changed,
                    new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)))
        .hasMessageContaining("holds results of another configuration")
        .hasMessageContaining("--fresh");
    assertThat(Files.readAllLines(results)).isEqualTo(resumed);
  }
}
