package io.kvs.bench.engine;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The JSON lines file of a repeated run ({@code --standard}, {@code --rounds}), which runs in
 * parts: each part (a choice of {@code --mixes}, {@code --workloads}, {@code --systems}, {@code
 * --api}) adds its phases to the same file, and a part started again skips what earlier ones
 * finished. The unit of work is one system's run on one mix in one round (it loads its own data):
 * done when the file holds every phase the part asks of it; a run cut short is started over, its
 * lines dropped. Every line carries the measurement settings ({@code "configuration"}); a file
 * holding another configuration's results is refused rather than mixed with them.
 */
final class ResultsFile {
  private final Path path;
  private final Set<String> done;

  private ResultsFile(Path path, Set<String> done) {
    this.path = path;
    this.done = done;
  }

  /** The settings that make results comparable, as recorded in every line of a repeated run. */
  static String configuration(EngineBenchmark.Config config) {
    String settings =
        String.format(
            Locale.ROOT,
            "cache=%dMiB l0=%dMiB dataset=%dMiB records=%d ops=%d scans=%d open=%ds threads=%d"
                + " blob-min=%d seed=%d",
            config.settings().cacheBytes() >> 20,
            config.settings().l0Bytes() >> 20,
            config.datasetBytes() >> 20,
            config.records(),
            config.operations(),
            config.scanOperations(),
            config.openNanos() / 1_000_000_000L,
            config.threads(),
            config.settings().blobMinBytes(),
            config.seed());
    // Only when given, so that files of runs without it stay comparable.
    return config.peakOpsPerSec() > 0
        ? settings + String.format(Locale.ROOT, " peak=%.0f", config.peakOpsPerSec())
        : settings;
  }

  /**
   * Prepares {@code path} for {@code config}: for a single run, an empty file; for a repeated one,
   * the results of earlier parts kept (or none with {@code fresh}) and the lines of runs this part
   * will do again removed.
   *
   * @throws IOException if the file holds results of another configuration, or cannot be read
   */
  static ResultsFile prepare(Path path, EngineBenchmark.Config config) throws IOException {
    if (!config.repeated() || config.fresh() || !Files.exists(path)) {
      Files.write(path, new byte[0]);
      return new ResultsFile(path, Set.of());
    }
    String wanted = configuration(config);
    Map<String, Set<String>> workloadsOf = new HashMap<>();
    List<String> lines = Files.readAllLines(path, StandardCharsets.UTF_8);
    List<Map<String, String>> parsed = new ArrayList<>();
    for (String line : lines) {
      if (line.isBlank()) {
        parsed.add(null);
        continue;
      }
      Map<String, String> fields = PhaseLine.TopLevel.fields(line);
      String recorded = fields.get("configuration");
      if (recorded == null || !recorded.equals('"' + wanted + '"')) {
        throw new IOException(
            path
                + " holds results of another configuration ("
                + (recorded == null ? "none recorded" : recorded)
                + "; this run: \""
                + wanted
                + "\"): pass --fresh to start over, or --out-dir to keep both");
      }
      parsed.add(fields);
      workloadsOf
          .computeIfAbsent(key(fields), k -> new HashSet<>())
          .add(unquoted(fields, "workload"));
    }
    Set<String> done = new HashSet<>();
    Set<String> rerun = new HashSet<>();
    for (Map.Entry<String, Set<String>> group : workloadsOf.entrySet()) {
      String system = group.getKey().split("\\|")[2];
      if (group.getValue().containsAll(expected(config, system))) {
        done.add(group.getKey());
      } else {
        rerun.add(group.getKey());
      }
    }
    List<String> kept = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      Map<String, String> fields = parsed.get(i);
      if (fields != null && !rerun.contains(key(fields))) {
        kept.add(lines.get(i));
      }
    }
    Files.write(path, kept, StandardCharsets.UTF_8);
    return new ResultsFile(path, done);
  }

  Path path() {
    return path;
  }

  /** Whether an earlier part finished {@code system}'s run on {@code mix} in {@code round}. */
  boolean done(int round, KvMix mix, String system) {
    return done.contains(round + "|" + mix.name() + "|" + system);
  }

  /** Every phase in the file now, earlier parts' and this one's. */
  List<PhaseLine> phases() throws IOException {
    List<PhaseLine> phases = new ArrayList<>();
    for (String line : Files.readAllLines(path, StandardCharsets.UTF_8)) {
      if (!line.isBlank()) {
        phases.add(PhaseLine.parse(line));
      }
    }
    return phases;
  }

  /** The workloads a run of {@code system} (a JVM or a native one) has in this configuration. */
  private static Set<String> expected(EngineBenchmark.Config config, String system) {
    boolean nativeRun = system.endsWith(EngineReport.NATIVE_SUFFIX);
    Set<String> ids = new HashSet<>();
    for (Workload workload : config.workloads()) {
      if (!nativeRun || NativeEngineRunner.supports(workload)) {
        ids.add(workload.id());
      }
    }
    return ids;
  }

  private static String key(Map<String, String> fields) {
    String round = fields.getOrDefault("round", "0");
    return round + "|" + unquoted(fields, "mix") + "|" + unquoted(fields, "system");
  }

  private static String unquoted(Map<String, String> fields, String name) {
    String value = fields.get(name);
    if (value == null || value.length() < 2) {
      throw new IllegalArgumentException("a result line without " + name);
    }
    return value.substring(1, value.length() - 1);
  }
}
