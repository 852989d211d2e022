package io.kvs.bench.engine;

import io.kvs.tools.Directories;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * {@code ./kvs bench engine [--quick]}: runs the KVS engine, RocksDB and RocksDB with BlobDB one
 * after another, each on a fresh directory, on the same records and operations: for every KV size
 * mix, each system loads the records (Load A) and then runs the other workloads in order on the
 * data it loaded. The open-loop phases (puts50, puts90) offer a share of the put rate the same
 * system sustained (putsPeak) in the same run. With {@code --api native} (part of the default),
 * every system also runs Load A and runs A-E from C++ ({@link NativeEngineRunner}), and the report
 * compares those runs with each other. Prints a table, writes JSON lines to {@code
 * <out>/engine.json} and a chart to {@code <out>/engine.png}.
 *
 * <p>Usage: {@code [--quick | --standard] [--rounds N] [--fresh] [--mixes SD,MD] [--workloads
 * loadA,runA,...] [--systems kvs,rocksdb,blobdb] [--api jvm,native] [--threads 4] [--cache-mib 128]
 * [--l0-mib 32] [--dataset-mib N] [--records N] [--operations N] [--scan-operations N]
 * [--open-seconds N] [--phase-limit-seconds N] [--drain-quiet-ms 1000] [--drain-limit-seconds N]
 * [--blob-min-bytes 64] [--data-dir target/bench/data] [--out-dir target/bench] [--seed N]
 * [--keep-data]}
 */
public final class EngineBenchmark {
  /** Share of the host's CPU used by other processes in a phase above which the run warns. */
  private static final double FOREIGN_CPU_SHARE_WARNING = 0.1;

  private EngineBenchmark() {}

  /**
   * Everything a run needs.
   *
   * @param profile "quick", "standard" or "full", "+custom" when options changed what it measures;
   *     recorded with the results
   * @param apis from where the systems are driven: the JVM, the native benchmark, or both (each
   *     system of a mix then runs twice, on fresh directories)
   * @param datasetBytes KV bytes to load per mix; the record count is this over the mix's average
   *     pair size
   * @param records if positive, the record count for every mix instead
   * @param operations operations of each run phase A to D
   * @param scanOperations operations of run E (mostly scans, each reading up to 100 pairs)
   * @param openNanos how long each open-loop phase offers its rate
   * @param phaseLimitNanos a phase stops at this wall time even if operations remain (a guard;
   *     results say when it happened)
   * @param quietNanos after a phase, the process counts as done with its background work once it
   *     did no I/O and almost no CPU work for this long
   * @param drainLimitNanos the longest wait for that after a phase; 0 skips the wait
   * @param rounds how many times every system runs every mix; above 1 (and in the standard profile)
   *     the run is repeated: it adds to {@code engine-<profile>.json}, resumes what an earlier part
   *     left, and reports medians ({@link ResultsFile})
   * @param fresh a repeated run starts its results file over instead of resuming it
   * @param peakOpsPerSec if positive, the peak the open loops offer shares of, instead of each
   *     system's measured putsPeak (to compare systems, or builds, at the same offered rate)
   */
  public record Config(
      String profile,
      List<KvMix> mixes,
      List<Workload> workloads,
      List<SystemKind> systems,
      List<EngineApi> apis,
      int threads,
      SystemSettings settings,
      long datasetBytes,
      long records,
      long operations,
      long scanOperations,
      long openNanos,
      long phaseLimitNanos,
      long quietNanos,
      long drainLimitNanos,
      Path dataDir,
      Path outDir,
      long seed,
      boolean keepData,
      int rounds,
      boolean fresh,
      double peakOpsPerSec) {

    /** Whether runs are repeated, resumed and reported as medians. */
    public boolean repeated() {
      return rounds > 1 || profile.startsWith("standard");
    }

    /** The name of the results file and chart, without extension. */
    public String resultsName() {
      return profile.startsWith("standard") ? "engine-standard" : "engine";
    }

    /** The records loaded for {@code mix}. */
    public long recordsFor(KvMix mix) {
      return records > 0 ? records : Math.max(1, (long) (datasetBytes / mix.averageKvBytes()));
    }

    /**
     * Operations of {@code workload}'s phase for {@code mix}; {@code measuredPeak} is the system's
     * sustained put rate ({@link Workload#PUTS_PEAK}), which an open-loop phase offers a share of.
     */
    public long operationsFor(Workload workload, KvMix mix, double measuredPeak) {
      if (workload.openLoopFraction() > 0) {
        return Math.max(1, (long) (rateFor(workload, measuredPeak) * openNanos / 1e9));
      }
      return switch (workload) {
        case LOAD_A -> recordsFor(mix);
        case PUTS_PEAK -> Long.MAX_VALUE; // timed: as many as fit in its time
        case RUN_E -> scanOperations;
        case OVERWRITE_3 -> Workload.OVERWRITE_PASSES * recordsFor(mix);
        default -> operations;
      };
    }

    /** How long {@code workload}'s phase may run: a timed one's length, else the guard. */
    public long limitFor(Workload workload) {
      return workload.timed() ? openNanos : phaseLimitNanos;
    }

    /** The rate an open-loop phase offers (0 for closed-loop phases). */
    public double rateFor(Workload workload, double measuredPeakOpsPerSec) {
      return workload.openLoopFraction()
          * (peakOpsPerSec > 0 ? peakOpsPerSec : measuredPeakOpsPerSec);
    }
  }

  private static final String USAGE =
      """
      usage: ./kvs bench engine [--quick] [options]
        --quick                    SD and MD; loadA, runA, runC, runE, puts50, puts90 (the default
                                   is everything)
        --standard                 every mix, loadA and runs A-E on 4 GiB (8x a 512 MiB cache,
                                   64 MiB L0s), 3 interleaved rounds, medians with their range;
                                   runs in parts (--mixes, --workloads, --systems, --api) that
                                   add to target/bench/engine-standard.json and resume it
        --rounds N                 repeat every system's run N times (standard: 3); above 1 the
                                   run resumes and reports medians as --standard does
        --fresh                    start a repeated run's results file over
        --mixes SD,MD              KV size mixes: S, M, L, SD, MD, LD
        --workloads runA,runC      loadA, runA ... runE, overwrite3 (3 full overwrites),
                                   putsPeak (the sustained put rate), puts50, puts90 (open-loop
                                   overwrites at 50 / 90 % of it; they bring putsPeak along);
                                   loadA always runs first
        --systems kvs,rocksdb      kvs, rocksdb, rocksdb-wal50, blobdb
        --api jvm,native           drive them from the JVM (JNI, RocksJava), from C++
                                   (kvs_engine_bench against Debian's librocksdb: no JNI on
                                   either side; loadA and runs A-E only), or both (the default)
        --threads 4                client threads, the same for every system
        --cache-mib 128            block cache (RocksDB) and node cache (KVS)
        --l0-mib 32                KVS L0 and RocksDB write buffer size
        --dataset-mib N            KV bytes to load per mix (default: 4 x cache)
        --records N                records per mix, instead of --dataset-mib
        --operations N             operations of runs A-D
        --scan-operations N        operations of run E
        --open-seconds N           length of putsPeak, puts50 and puts90 (20 quick, 60 full)
        --peak-ops N               offer puts50 / puts90 shares of N ops/s, not of each
                                   system's measured putsPeak (the same rate for every system)
        --phase-limit-seconds N    stop a phase after this long (a guard)
        --drain-quiet-ms 1000      quiet time that ends the drain after a phase
        --drain-limit-seconds N    longest drain; 0: none
        --blob-min-bytes 64        BlobDB's min_blob_size
        --data-dir DIR             where the systems' files go (target/bench/data)
        --out-dir DIR              where engine.json and engine.png go (target/bench)
        --seed N                   workload seed
        --keep-data                keep the systems' files after the run
      See docs/BENCHMARKS.md for the definitions of the metrics.
      """;

  /** Entry point of {@code ./kvs bench engine}. */
  public static void main(String[] args) throws IOException {
    if (System.getProperty("java.awt.headless") == null) {
      System.setProperty("java.awt.headless", "true");
    }
    if (Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h")) {
      System.out.print(USAGE);
      return;
    }
    Config config;
    try {
      config = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("kvs bench engine: " + e.getMessage());
      System.err.print(USAGE);
      System.exit(2);
      return;
    }
    run(config, System.out);
  }

  /** Parses the command line over the quick or full profile's defaults. */
  public static Config parse(String[] args) {
    boolean quick = Arrays.asList(args).contains("--quick");
    boolean standard = Arrays.asList(args).contains("--standard");
    if (quick && standard) {
      throw new IllegalArgumentException("--quick and --standard are two profiles; pick one");
    }
    // Defaults of the profiles; see docs/BENCHMARKS.md for how they were chosen.
    List<KvMix> mixes = quick ? List.of(KvMix.SD, KvMix.MD) : List.of(KvMix.values());
    List<Workload> workloads =
        quick
            ? List.of(
                Workload.LOAD_A,
                Workload.RUN_A,
                Workload.RUN_C,
                Workload.RUN_E,
                Workload.PUTS_50,
                Workload.PUTS_90)
            : standard
                ? List.of(
                    Workload.LOAD_A,
                    Workload.RUN_A,
                    Workload.RUN_B,
                    Workload.RUN_C,
                    Workload.RUN_D,
                    Workload.RUN_E)
                : List.of(Workload.values());
    List<SystemKind> systems = List.of(SystemKind.values());
    List<EngineApi> apis = List.of(EngineApi.values());
    int threads = 4;
    // Standard: a dataset of 4 GiB, 8x the cache, and the engines' default write buffer / L0.
    long cacheMib = standard ? 512 : 128;
    long l0Mib = standard ? 64 : 32;
    long datasetMib = 0;
    long records = 0;
    long operations = quick ? 400_000 : 2_000_000;
    long scanOperations = quick ? 40_000 : 200_000;
    long openSeconds = quick ? 20 : 60;
    long phaseLimitSeconds = quick ? 120 : 1800;
    long quietMillis = 1000;
    long drainLimitSeconds = quick ? 120 : 600;
    long blobMinBytes = 64;
    Path dataDir = Paths.get("target/bench/data");
    Path outDir = Paths.get("target/bench");
    long seed = 20240229L;
    boolean keepData = false;
    boolean custom = false;
    int rounds = standard ? 3 : 1;
    boolean fresh = false;
    double peakOps = 0;

    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      String name = arg;
      String value = null;
      int equals = arg.indexOf('=');
      if (equals > 0) {
        name = arg.substring(0, equals);
        value = arg.substring(equals + 1);
      }
      switch (name) {
        case "--quick", "--standard" -> {}
        case "--keep-data" -> keepData = true;
        case "--fresh" -> fresh = true;
        default -> {
          if (value == null) {
            if (i + 1 >= args.length) {
              throw new IllegalArgumentException("missing value after " + name);
            }
            value = args[++i];
          }
          // Where files go does not change what is measured; everything else does, but for the
          // choice of a standard run's part (what it runs, not how).
          custom |=
              !List.of("--data-dir", "--out-dir").contains(name)
                  && !(standard
                      && List.of("--mixes", "--workloads", "--systems", "--api", "--rounds")
                          .contains(name));
          switch (name) {
            case "--mixes" -> mixes = list(value, KvMix::parse);
            case "--workloads" -> workloads = list(value, Workload::parse);
            case "--systems" -> systems = list(value, SystemKind::parse);
            case "--api" -> apis = list(value, EngineApi::parse);
            case "--threads" -> threads = (int) positive(name, value);
            case "--cache-mib" -> cacheMib = positive(name, value);
            case "--l0-mib" -> l0Mib = positive(name, value);
            case "--dataset-mib" -> datasetMib = positive(name, value);
            case "--records" -> records = positive(name, value);
            case "--operations" -> operations = positive(name, value);
            case "--scan-operations" -> scanOperations = positive(name, value);
            case "--open-seconds" -> openSeconds = positive(name, value);
            case "--phase-limit-seconds" -> phaseLimitSeconds = positive(name, value);
            case "--drain-quiet-ms" -> quietMillis = positive(name, value);
            case "--drain-limit-seconds" -> drainLimitSeconds = nonNegative(name, value);
            case "--blob-min-bytes" -> blobMinBytes = Long.parseLong(value);
            case "--data-dir" -> dataDir = Paths.get(value);
            case "--out-dir" -> outDir = Paths.get(value);
            case "--seed" -> seed = Long.parseLong(value);
            case "--rounds" -> rounds = (int) positive(name, value);
            case "--peak-ops" -> peakOps = positive(name, value);
            default -> throw new IllegalArgumentException("unknown option " + name);
          }
        }
      }
    }
    // The cache is about a quarter of the dataset, as in the seeds' methodology.
    long datasetBytes = datasetMib > 0 ? datasetMib << 20 : (standard ? 8 : 4) * (cacheMib << 20);
    List<Workload> ordered = new ArrayList<>();
    ordered.add(Workload.LOAD_A); // every system loads its data first, asked for or not
    // An open loop offers a share of the sustained put rate, measured first in the same run.
    boolean openLoop = workloads.stream().anyMatch(workload -> workload.openLoopFraction() > 0);
    for (Workload workload : Workload.values()) {
      if (workload != Workload.LOAD_A
          && (workloads.contains(workload) || (openLoop && workload == Workload.PUTS_PEAK))) {
        ordered.add(workload);
      }
    }
    return new Config(
        (quick ? "quick" : standard ? "standard" : "full") + (custom ? "+custom" : ""),
        mixes,
        List.copyOf(ordered),
        systems,
        apis,
        threads,
        new SystemSettings(cacheMib << 20, l0Mib << 20, 2, blobMinBytes),
        datasetBytes,
        records,
        operations,
        scanOperations,
        TimeUnit.SECONDS.toNanos(openSeconds),
        // An open-loop phase that falls behind still ends near its length: the guard is twice it.
        TimeUnit.SECONDS.toNanos(Math.max(phaseLimitSeconds, 2 * openSeconds)),
        TimeUnit.MILLISECONDS.toNanos(quietMillis),
        TimeUnit.SECONDS.toNanos(drainLimitSeconds),
        dataDir,
        outDir,
        seed,
        keepData,
        rounds,
        fresh,
        peakOps);
  }

  /**
   * Runs the benchmark; returns the results of the phases the JVM ran in this invocation (the
   * native ones, and a repeated run's earlier parts, are in the results file and the report).
   */
  public static List<PhaseResult> run(Config config, PrintStream out) throws IOException {
    long started = System.nanoTime();
    Files.createDirectories(config.outDir());
    Path chart = config.outDir().resolve(config.resultsName() + ".png");
    printHeader(config, out);
    ResultsFile results =
        ResultsFile.prepare(config.outDir().resolve(config.resultsName() + ".json"), config);

    EngineReport report = new EngineReport();
    List<PhaseResult> jvmResults = new ArrayList<>();
    try (BufferedWriter lines =
        Files.newBufferedWriter(
            results.path(),
            StandardCharsets.UTF_8,
            StandardOpenOption.CREATE,
            StandardOpenOption.APPEND,
            StandardOpenOption.WRITE)) {
      for (int round = 1; round <= config.rounds(); round++) {
        for (KvMix mix : config.mixes()) {
          // Interleaved: each round starts with the next system, so that a machine that drifts
          // during a round does not favour one system in every round.
          List<SystemKind> order = new ArrayList<>(config.systems());
          Collections.rotate(order, -(round - 1));
          for (SystemKind kind : order) {
            for (EngineApi api : config.apis()) {
              String system =
                  kind.id() + (api == EngineApi.NATIVE ? EngineReport.NATIVE_SUFFIX : "");
              if (config.repeated() && results.done(round, mix, system)) {
                out.printf(
                    Locale.ROOT,
                    "  %-3s %-20s round %d: done in an earlier part%n",
                    mix.name(),
                    system,
                    round);
                continue;
              }
              List<String> written =
                  api == EngineApi.NATIVE
                      ? runNative(config, mix, kind, report, out)
                      : runJvm(config, mix, kind, report, jvmResults, out);
              for (String line : written) {
                lines.write(decorated(line, config, round));
                lines.newLine();
              }
              lines.flush();
            }
          }
        }
      }
    }
    if (config.repeated()) {
      report = new EngineReport();
      for (PhaseRow row : MedianRow.of(results.phases())) {
        report.add(row);
      }
    }
    report.writeChart(chart);
    out.println();
    if (config.repeated()) {
      out.printf(
          Locale.ROOT,
          "Medians over the rounds in %s (ops/s: median (slowest-fastest, rounds)):%n",
          results.path());
    }
    out.print(report.table());
    out.println();
    out.printf(
        Locale.ROOT,
        "ratios: kvs/x above 1 mean KVS is higher (better for ops/s; worse for cpu, io, space and"
            + " latency)%n");
    double busiest =
        jvmResults.stream()
            .mapToDouble(r -> r.usage().foreignCpuShare())
            .filter(Double::isFinite)
            .max()
            .orElse(0);
    if (busiest > FOREIGN_CPU_SHARE_WARNING) {
      out.printf(
          Locale.ROOT,
          "WARNING: other processes used up to %.0f%% of the host's CPU during a phase; as the"
              + " systems ran one after another, they did not get the same machine. Rerun on a"
              + " quiet machine before trusting the ratios (foreign_cpu_share in the JSON).%n",
          100 * busiest);
    }
    out.printf(Locale.ROOT, "results: %s%nchart:   %s%n", results.path(), chart);
    out.printf(Locale.ROOT, "wall time: %.1f s%n", (System.nanoTime() - started) / 1e9);
    return jvmResults;
  }

  /** Runs {@code kind} on {@code mix} from the JVM, on a fresh directory; returns its lines. */
  private static List<String> runJvm(
      Config config,
      KvMix mix,
      SystemKind kind,
      EngineReport report,
      List<PhaseResult> jvmResults,
      PrintStream out)
      throws IOException {
    WorkloadRunner runner =
        new WorkloadRunner(config.threads(), config.seed(), ZipfianGenerator.YCSB_THETA);
    Path directory = config.dataDir().resolve(mix.name()).resolve(kind.id());
    Directories.deleteRecursively(directory);
    Files.createDirectories(directory);
    Dataset dataset = new Dataset(mix, config.seed(), capacity(config, mix));
    List<String> lines = new ArrayList<>();
    try (KvSystem system = kind.open(directory, config.settings())) {
      // This system's sustained put rate (putsPeak), which open-loop phases offer a share of.
      double peak = 0;
      for (Workload workload : config.workloads()) {
        PhaseResult result =
            runner.run(
                system,
                dataset,
                workload,
                config.operationsFor(workload, mix, peak),
                config.rateFor(workload, peak),
                config.limitFor(workload),
                config.quietNanos(),
                config.drainLimitNanos());
        if (workload == Workload.PUTS_PEAK) {
          peak = result.opsPerSec();
        }
        report.add(result);
        jvmResults.add(result);
        lines.add(result.toJson().toString());
        out.println(progressLine(result));
      }
    }
    if (!config.keepData()) {
      Directories.deleteRecursively(directory);
      deleteIfEmpty(config.dataDir().resolve(mix.name()));
    }
    return lines;
  }

  /** Runs {@code kind} on {@code mix} through the native benchmark, on a fresh directory. */
  private static List<String> runNative(
      Config config, KvMix mix, SystemKind kind, EngineReport report, PrintStream out)
      throws IOException {
    Path directory =
        config.dataDir().resolve(mix.name()).resolve(kind.id() + EngineReport.NATIVE_SUFFIX);
    Directories.deleteRecursively(directory);
    Files.createDirectories(directory);
    List<String> lines = new ArrayList<>();
    for (PhaseLine phase : NativeEngineRunner.run(config, mix, kind, directory, out)) {
      report.add(phase);
      lines.add(phase.json());
    }
    if (!config.keepData()) {
      Directories.deleteRecursively(directory);
      deleteIfEmpty(config.dataDir().resolve(mix.name()));
    }
    return lines;
  }

  /** A phase's JSON line with the run's settings added (and a repeated run's round). */
  private static String decorated(String json, Config config, int round) {
    StringBuilder line = new StringBuilder(json.substring(0, json.length() - 1));
    line.append(String.format(Locale.ROOT, ",\"profile\":\"%s\"", config.profile()));
    line.append(",\"cache_bytes\":").append(config.settings().cacheBytes());
    line.append(",\"l0_bytes\":").append(config.settings().l0Bytes());
    line.append(",\"blob_min_bytes\":").append(config.settings().blobMinBytes());
    line.append(",\"seed\":").append(config.seed());
    if (config.repeated()) {
      line.append(",\"round\":").append(round);
      line.append(",\"configuration\":\"").append(ResultsFile.configuration(config)).append('"');
    }
    return line.append('}').toString();
  }

  private static long capacity(Config config, KvMix mix) {
    long capacity = config.recordsFor(mix);
    for (Workload workload : config.workloads()) {
      if (!workload.isLoad() && workload.proportion(Operation.INSERT) > 0) {
        capacity += config.operationsFor(workload, mix, 0);
      }
    }
    return capacity;
  }

  private static void printHeader(Config config, PrintStream out) {
    SystemSettings settings = config.settings();
    out.printf(Locale.ROOT, "KVS engine benchmark (%s profile)%n", config.profile());
    out.printf(
        Locale.ROOT,
        "  systems   %s, one after another, %d client threads each, driven from %s%n",
        String.join(", ", config.systems().stream().map(SystemKind::id).toList()),
        config.threads(),
        String.join(" and ", config.apis().stream().map(EngineApi::id).toList()));
    out.printf(
        Locale.ROOT,
        "  memory    cache %d MiB + 2 x %d MiB in-memory levels (KVS L0 / RocksDB write buffers)%n",
        settings.cacheBytes() >> 20,
        settings.l0Bytes() >> 20);
    if (settings.cacheBytes() < 2 * settings.l0Bytes()) {
      out.printf(
          Locale.ROOT,
          "  note      the cache is below twice the L0 size: KVS's memory budget (2 x cache, half"
              + " for L0s) will switch its L0s before they are full%n");
    }
    for (KvMix mix : config.mixes()) {
      long records = config.recordsFor(mix);
      out.printf(
          Locale.ROOT,
          "  mix %-5s %,d records, %.0f MiB of KV pairs (cache = %.0f%% of it)%n",
          mix.name(),
          records,
          records * mix.averageKvBytes() / (1 << 20),
          100.0 * settings.cacheBytes() / (records * mix.averageKvBytes()));
    }
    out.printf(
        Locale.ROOT,
        "  phases    %s; runs A-D %,d ops, run E %,d ops, open loops %d s; limit %d s per phase%n",
        String.join(", ", config.workloads().stream().map(Workload::id).toList()),
        config.operations(),
        config.scanOperations(),
        TimeUnit.NANOSECONDS.toSeconds(config.openNanos()),
        TimeUnit.NANOSECONDS.toSeconds(config.phaseLimitNanos()));
    out.printf(
        Locale.ROOT,
        "  drain     after each phase, until no I/O and <15%% of a core for %d ms (at most %d s);"
            + " cpu/op and io amp include it%n",
        TimeUnit.NANOSECONDS.toMillis(config.quietNanos()),
        TimeUnit.NANOSECONDS.toSeconds(config.drainLimitNanos()));
    if (config.repeated()) {
      out.printf(
          Locale.ROOT,
          "  rounds    %d, interleaved; added to %s.json (resumed unless --fresh)%n",
          config.rounds(),
          config.outDir().resolve(config.resultsName()));
    }
    out.printf(Locale.ROOT, "  data      %s%n%n", config.dataDir().toAbsolutePath());
  }

  private static String progressLine(PhaseResult result) {
    return String.format(
        Locale.ROOT,
        "  %-3s %-8s %-5s %,11d ops in %6.1f s: %,9.0f ops/s, cpu %6.2f us/op, io amp %6.2f,"
            + " space amp %5.2f, p99 %s us, drain %.1f s, others %.0f%% cpu%s",
        result.mix().name(),
        result.system(),
        result.workload().id(),
        result.operations(),
        result.nanos() / 1e9,
        result.opsPerSec(),
        result.cpuMicrosPerOp(),
        result.ioAmplification(),
        result.spaceAmplification(),
        EngineReport.number(result.latencies().overall().p99Micros()),
        result.drain().busyNanos() / 1e9,
        100 * result.usage().foreignCpuShare(),
        (result.truncated() ? " (stopped at the phase time limit)" : "")
            + (result.drain().timedOut() ? " (still busy at the drain limit)" : ""));
  }

  private static <T> List<T> list(String value, Function<String, T> parse) {
    List<T> items = new ArrayList<>();
    for (String part : value.split(",")) {
      if (!part.isBlank()) {
        items.add(parse.apply(part));
      }
    }
    if (items.isEmpty()) {
      throw new IllegalArgumentException("empty list: " + value);
    }
    return List.copyOf(items);
  }

  private static long positive(String name, String value) {
    long parsed = nonNegative(name, value);
    if (parsed == 0) {
      throw new IllegalArgumentException(name + " must be positive: " + value);
    }
    return parsed;
  }

  private static long nonNegative(String name, String value) {
    long parsed;
    try {
      parsed = Long.parseLong(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " needs a number: " + value, e);
    }
    if (parsed < 0) {
      throw new IllegalArgumentException(name + " must not be negative: " + value);
    }
    return parsed;
  }

  private static void deleteIfEmpty(Path directory) throws IOException {
    try {
      Files.deleteIfExists(directory);
    } catch (DirectoryNotEmptyException e) {
      // Someone else's files: leave them.
    }
  }
}
