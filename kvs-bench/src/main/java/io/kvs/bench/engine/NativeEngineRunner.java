package io.kvs.bench.engine;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs the native engine benchmark ({@code kvs_engine_bench}, kvs-native/src/main/cpp/tools/
 * engine_bench_main.cc) for one system on one mix, in a process of its own so that the CPU time and
 * device bytes it counts are that system's alone: Load A, then the runs of the configuration it
 * supports (A to E; the open loops and overwrite3 are the JVM's only).
 */
final class NativeEngineRunner {
  private NativeEngineRunner() {}

  /** Whether the native benchmark runs {@code workload}. */
  static boolean supports(Workload workload) {
    return switch (workload) {
      case LOAD_A, RUN_A, RUN_B, RUN_C, RUN_D, RUN_E -> true;
      case OVERWRITE_3, PUTS_PEAK, PUTS_50, PUTS_90 -> false;
    };
  }

  /**
   * The tool, as the native build leaves it, under the repository: {@code kvs.home} (the tests'),
   * else {@code KVS_HOME} (the launcher's), else the working directory.
   */
  static Path tool() {
    String home = System.getProperty("kvs.home", System.getenv("KVS_HOME"));
    Path base = home == null || home.isEmpty() ? Path.of("") : Path.of(home);
    return base.resolve(Path.of("kvs-native", "target", "native", "kvs_engine_bench"));
  }

  /**
   * Runs {@code kind} on {@code mix} in {@code directory} (fresh), printing the tool's progress
   * lines to {@code out}; returns its phases in order.
   *
   * @throws IOException if the tool is missing, fails, or outlives every phase's limits
   */
  static List<PhaseLine> run(
      EngineBenchmark.Config config, KvMix mix, SystemKind kind, Path directory, PrintStream out)
      throws IOException {
    Path tool = tool();
    if (!Files.isExecutable(tool)) {
      throw new IOException(
          tool
              + " is not built: it needs Debian's librocksdb-dev (./kvs build installs it), then"
              + " a rebuild");
    }
    List<String> runs = new ArrayList<>();
    for (Workload workload : config.workloads()) {
      if (!workload.isLoad() && supports(workload)) {
        runs.add(workload.id());
      }
    }
    List<String> command =
        new ArrayList<>(
            List.of(
                tool.toString(),
                "--system",
                kind.id(),
                "--mix",
                mix.name(),
                "--dir",
                directory.toString(),
                "--workloads",
                String.join(",", runs),
                "--records",
                Long.toString(config.recordsFor(mix)),
                "--operations",
                Long.toString(config.operations()),
                "--scan-operations",
                Long.toString(config.scanOperations()),
                "--threads",
                Integer.toString(config.threads()),
                "--cache-mib",
                Long.toString(config.settings().cacheBytes() >> 20),
                "--l0-mib",
                Long.toString(config.settings().l0Bytes() >> 20),
                "--blob-min-bytes",
                Long.toString(config.settings().blobMinBytes()),
                "--seed",
                Long.toUnsignedString(config.seed()),
                "--quiet-ms",
                Long.toString(TimeUnit.NANOSECONDS.toMillis(config.quietNanos())),
                "--drain-limit-seconds",
                Long.toString(TimeUnit.NANOSECONDS.toSeconds(config.drainLimitNanos())),
                "--phase-limit-seconds",
                Long.toString(
                    Math.max(1, TimeUnit.NANOSECONDS.toSeconds(config.phaseLimitNanos())))));
    Process process = new ProcessBuilder(command).start();
    Thread progress =
        new Thread(
            () -> {
              try (BufferedReader lines =
                  new BufferedReader(
                      new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
                lines.lines().forEach(out::println);
              } catch (IOException e) {
                out.println("  (lost the native benchmark's progress: " + e.getMessage() + ")");
              }
            },
            "native-bench-progress");
    progress.setDaemon(true);
    progress.start();
    List<PhaseLine> phases = new ArrayList<>();
    try (BufferedReader lines =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        if (!line.isBlank()) {
          phases.add(PhaseLine.parse(line));
        }
      }
    } catch (IllegalArgumentException e) {
      process.destroyForcibly();
      throw new IOException("unreadable output of " + tool + ": " + e.getMessage(), e);
    }
    // Its output has ended: the process is exiting (or has closed stdout, which it never does).
    long waitSeconds = 60;
    try {
      if (!process.waitFor(waitSeconds, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IOException(tool + " did not exit " + waitSeconds + " s after its output ended");
      }
      progress.join(TimeUnit.SECONDS.toMillis(waitSeconds));
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while waiting for " + tool, e);
    }
    if (process.exitValue() != 0) {
      throw new IOException(
          tool + " failed (exit " + process.exitValue() + ") on " + kind.id() + ", " + mix);
    }
    if (phases.size() != runs.size() + 1) {
      throw new IOException(
          tool + " reported " + phases.size() + " phases of " + (runs.size() + 1));
    }
    return phases;
  }
}
