package io.kvs.bench.replication;

import io.kvs.bench.engine.KvMix;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.security.SecurityOptions;
import io.kvs.tools.LaunchedCluster;
import io.kvs.tools.local.LocalStatus;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * {@code ./kvs bench replication [--quick]}: the replication modes side by side on a local cluster
 * of processes (ZooKeeper, a master, three region servers on this machine; 32 regions), driven by
 * the real YCSB client: {@code none}, {@code build-index} (every backup re-inserts every write: the
 * baseline) and {@code send-index} (backups install the primary's index), at replication factors 2
 * and 3. For each mix of KV sizes a fresh cluster is loaded (YCSB Load A) and then runs workloads
 * (Run A; B to D in the full profile).
 *
 * <p>Per phase it reports ops/s; server CPU per operation, all servers, split by thread role into
 * request handling, compaction, log replication, index shipping, backup index upkeep and other; the
 * CPU spent on backups' indexes per operation (Send-Index: rewriting and installing shipped
 * segments; Build-Index: applying records plus the backups' share of compaction, by compaction
 * bytes); device I/O amplification (bytes read and written by the servers per byte written by
 * YCSB); network amplification (replication bytes sent per byte written); L0 bytes held for backup
 * regions at the end; latency percentiles per operation type. A table, JSON lines in {@code
 * target/bench/replication.json}, and a chart ({@code replication.png}) like the seeds' Figures
 * 6-8.
 *
 * <p>Usage ({@code --help}): {@code [--quick | --standard] [--records N] [--operations N]
 * [--threads N] [--modes none,build-index,send-index] [--rf 2,3] [--mixes SD,...] [--workloads
 * a,b,c,d] [--memory BYTES] [--l0-size BYTES] [--growth-factor N] [--regions N] [--rounds N]
 * [--out-dir DIR] [--data-dir DIR] [--ycsb-lib DIR] [--metrics on,off] [--fabric stream|shm]
 * [--shards N]}. {@code --fabric} is the servers' replication transport and decides the clients':
 * {@code stream} (the default, the native TCP transport for commodity networks: replication streams
 * between servers, YCSB over the client door) or {@code shm} (libfabric's one-sided protocol over
 * shared memory, YCSB over fabric too). The quick profile loads 400,000 records and runs 200,000
 * operations with 1 MiB region L0s, so that compactions (and Build-Index backups' own inserts)
 * happen in a short run.
 *
 * <p>The standard profile is the seeds' comparison where compaction matters (Tebis §5): Build-Index
 * against Send-Index at RF 3, growth factor 4, 8 regions whose 1 MiB L0s hold tens of thousands of
 * pairs, 400,000 records of the SD mix (about 105 MB, three times each server's 32 MiB memory
 * budget, so that compactions reach the last level), Load A then Run A of 100,000 operations, in 3
 * rounds that alternate the modes. With several rounds it reports each ratio as the median of the
 * rounds' ratios with their spread, and the Tebis Table 3 breakdown (cycles per operation by
 * component at this machine's clock, medians over the rounds) beside the published numbers.
 *
 * <p>{@code --metrics on,off} runs every case twice per round, with the servers' request metrics on
 * and off ({@code --metrics} of the region servers), side by side: what counting and timing
 * requests costs in CPU per operation (docs/BENCHMARKS.md, "Cost of metrics"). The cases are then
 * labelled {@code <mode>+metrics} and {@code <mode>-metrics}.
 */
public final class ReplicationBenchmark {
  private static final String SPLIT_PREFIX = "usertable:user";

  /** Bytes of a YCSB key as the binding stores it ({@code usertable:user} and about 19 digits). */
  private static final int KEY_BYTES = 33;

  /** Bytes the binding adds to one field's value: version, count, name length, "field0", size. */
  private static final int FIELD_OVERHEAD_BYTES = 11;

  /** Field lengths giving KV pairs of each size class with the key and overhead above. */
  private static final int SMALL_FIELD = 8;

  private static final int MEDIUM_FIELD = 80;
  private static final int LARGE_FIELD = 990;

  private final Options options;
  private final List<PhaseResult> results = new ArrayList<>();

  private ReplicationBenchmark(Options options) {
    this.options = options;
  }

  /** What the command line asks for. */
  record Options(
      String profile,
      long records,
      long operations,
      int threads,
      List<String> modes,
      List<Integer> replicationFactors,
      List<KvMix> mixes,
      List<String> workloads,
      long memoryBytes,
      long l0SizeBytes,
      int growthFactor,
      int regions,
      int rounds,
      Path outDir,
      Path dataDir,
      Path ycsbLib,
      List<String> metrics,
      String fabric,
      int shards) {
    boolean quick() {
      return profile.equals("quick");
    }
  }

  /** One measured phase of one case. */
  record PhaseResult(
      int round,
      String mode,
      int rf,
      String mix,
      String workload,
      YcsbPhase.Result ycsb,
      List<ServerSample> servers,
      List<ServerSample> endSamples,
      double kvBytesPerWrite) {}

  static final String USAGE =
      """
      usage: ./kvs bench replication [--quick | --standard] [options]
        --modes none,build-index,send-index   replication modes to compare (quick: all three)
        --rf 2,3                  replication factors (standard: 3)
        --threads N               YCSB client threads, each with one request in flight (128)
        --records N, --operations N          load and run sizes (quick: 400,000 and 200,000)
        --mixes SD,...            KV size mixes (quick and standard: SD)
        --workloads a,b,c,d       YCSB runs after the load (quick and standard: a)
        --memory BYTES, --l0-size BYTES, --growth-factor N, --regions N, --rounds N
        --fabric stream|shm       replication transport (stream: native TCP, the default)
        --shards N                each server's shard threads (default: one per core)
        --metrics on,off          servers' request metrics, each setting a case of its own
        --out-dir DIR, --data-dir DIR, --ycsb-lib DIR
      """;

  public static void main(String[] args) throws Exception {
    if (Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h")) {
      System.out.print(USAGE);
      return;
    }
    Options options;
    try {
      options = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("kvs bench replication: " + e.getMessage());
      System.err.print(USAGE);
      System.exit(2);
      return;
    }
    new ReplicationBenchmark(options).run();
  }

  static Options parse(String[] args) {
    boolean quick = false;
    boolean standard = false;
    int rounds = -1;
    int growthFactor = -1;
    long records = -1;
    long operations = -1;
    // 128 requests in flight: the condition issue 26's targets are stated at (per-request costs
    // a server can batch -- sends, wake-ups -- are shared as they would be under load).
    int threads = 128;
    List<String> modes = null;
    List<Integer> rfs = null;
    List<KvMix> mixes = null;
    List<String> workloads = null;
    long memory = -1;
    long l0Size = -1;
    int regions = -1;
    Path outDir = Paths.get("target", "bench");
    Path dataDir = Paths.get("target", "bench", "data");
    Path ycsbLib = null;
    List<String> metrics = List.of("on");
    String fabric = "stream";
    int shards = 0;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> quick = true;
        case "--standard" -> standard = true;
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--growth-factor" -> growthFactor = Integer.parseInt(args[++i]);
        case "--records" -> records = Long.parseLong(args[++i]);
        case "--operations" -> operations = Long.parseLong(args[++i]);
        case "--threads" -> threads = Integer.parseInt(args[++i]);
        case "--modes" -> modes = List.of(args[++i].split(","));
        case "--rf" -> rfs = List.of(args[++i].split(",")).stream().map(Integer::valueOf).toList();
        case "--mixes" ->
            mixes = List.of(args[++i].split(",")).stream().map(KvMix::valueOf).toList();
        case "--workloads" -> workloads = List.of(args[++i].split(","));
        case "--memory" -> memory = Long.parseLong(args[++i]);
        case "--l0-size" -> l0Size = Long.parseLong(args[++i]);
        case "--regions" -> regions = Integer.parseInt(args[++i]);
        case "--out-dir" -> outDir = Paths.get(args[++i]);
        case "--data-dir" -> dataDir = Paths.get(args[++i]);
        case "--ycsb-lib" -> ycsbLib = Paths.get(args[++i]);
        case "--metrics" -> metrics = List.of(args[++i].split(","));
        case "--fabric" -> fabric = args[++i];
        case "--shards" -> shards = Integer.parseInt(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (quick && standard) {
      throw new IllegalArgumentException("--quick or --standard, not both");
    }
    if (!List.of("stream", "shm").contains(fabric)) {
      throw new IllegalArgumentException("--fabric takes stream or shm, not " + fabric);
    }
    if (modes == null) {
      modes =
          standard
              ? List.of("build-index", "send-index")
              : List.of("none", "build-index", "send-index");
    }
    if (rfs == null) {
      rfs = standard ? List.of(3) : List.of(2, 3);
    }
    for (String mode : modes) {
      if (!List.of("none", "build-index", "send-index").contains(mode)) {
        throw new IllegalArgumentException("unknown mode " + mode);
      }
    }
    for (String setting : metrics) {
      if (!List.of("on", "off").contains(setting)) {
        throw new IllegalArgumentException("--metrics takes on, off or both, not " + setting);
      }
    }
    boolean shortRun = quick || standard;
    if (mixes == null) {
      mixes = shortRun ? List.of(KvMix.SD) : List.of(KvMix.values());
    }
    if (workloads == null) {
      workloads = shortRun ? List.of("a") : List.of("a", "b", "c", "d");
    }
    // Enough data per region that its L0 is compacted several times and a
    // Build-Index backup applies several 2 MiB buffers.
    if (records < 0) {
      records = quick ? 400_000 : standard ? 400_000 : 2_000_000;
    }
    if (operations < 0) {
      operations = quick ? 200_000 : standard ? 100_000 : records;
    }
    if (l0Size < 0) {
      l0Size = shortRun ? 1L << 20 : 4L << 20;
    }
    if (memory < 0) {
      memory = standard ? 32L << 20 : 64L << 20;
    }
    if (regions < 0) {
      regions = standard ? 8 : 32;
    }
    if (growthFactor < 0) {
      growthFactor = standard ? 4 : 0; // 0: the engine's default (8)
    }
    if (rounds < 0) {
      rounds = standard ? 3 : 1;
    }
    if (ycsbLib == null) {
      ycsbLib = defaultYcsbLib();
    }
    return new Options(
        quick ? "quick" : standard ? "standard" : "full",
        records,
        operations,
        threads,
        modes,
        rfs,
        mixes,
        workloads,
        memory,
        l0Size,
        growthFactor,
        regions,
        rounds,
        outDir,
        dataDir,
        ycsbLib,
        metrics,
        fabric,
        shards);
  }

  /** How the YCSB clients reach the servers with the servers' {@code --fabric}. */
  static String clientsOver(Options options) {
    return options.fabric().equals("shm")
        ? "fabric shm"
        : "the client door (native TCP), replication over streams";
  }

  /** YCSB core sits next to this module's jar ({@code kvs-bench/target/ycsb-lib}). */
  private static Path defaultYcsbLib() {
    try {
      Path jar =
          Paths.get(
              ReplicationBenchmark.class
                  .getProtectionDomain()
                  .getCodeSource()
                  .getLocation()
                  .toURI());
      return jar.getParent().resolve("ycsb-lib");
    } catch (java.net.URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  private void run() throws Exception {
    System.out.printf(
        Locale.ROOT,
        "replication benchmark (%s): %d regions on 3 servers, %,d records, %,d operations per run,"
            + " %d YCSB threads over %s, server memory budget %d MiB, region L0 %d"
            + " KiB, growth factor %s, %d round(s)%n",
        options.profile(),
        options.regions(),
        options.records(),
        options.operations(),
        options.threads(),
        clientsOver(options),
        options.memoryBytes() >> 20,
        options.l0SizeBytes() >> 10,
        options.growthFactor() > 0 ? Integer.toString(options.growthFactor()) : "8 (default)",
        options.rounds());
    Files.createDirectories(options.dataDir());
    // Rounds alternate the modes, so that a slow spell of the machine falls on all of them.
    for (KvMix mix : options.mixes()) {
      for (int round = 1; round <= options.rounds(); round++) {
        for (String mode : options.modes()) {
          List<Integer> rfs = mode.equals("none") ? List.of(1) : options.replicationFactors();
          for (int rf : rfs) {
            for (String metrics : options.metrics()) {
              runCase(round, mode, rf, mix, metrics);
            }
          }
        }
      }
    }
    new ReplicationReport(results, options).write();
  }

  private void runCase(int round, String mode, int rf, KvMix mix, String metrics) throws Exception {
    // With metrics on and off side by side, the cases are told apart by their label.
    String label =
        options.metrics().size() > 1 || !metrics.equals("on")
            ? mode + (metrics.equals("on") ? "+metrics" : "-metrics")
            : mode;
    String name =
        label
            + "-rf"
            + rf
            + "-"
            + mix.name().toLowerCase(Locale.ROOT)
            + (options.rounds() > 1 ? "-round" + round : "");
    Path dir = options.dataDir().resolve("replication-" + name).toAbsolutePath();
    System.out.printf(
        Locale.ROOT,
        "%n== %s, RF %d, mix %s%s%n",
        label,
        rf,
        mix,
        options.rounds() > 1 ? ", round " + round + " of " + options.rounds() : "");
    List<String> clusterOptions = new ArrayList<>();
    Collections.addAll(
        clusterOptions,
        "--servers",
        "3",
        "--regions",
        Integer.toString(options.regions()),
        "--split-first-size", // a fixed layout, so that runs compare
        "0",
        "--merge-size",
        "0",
        "--replication",
        Integer.toString(Math.max(rf, 2)),
        "--mode",
        mode,
        "--fabric",
        options.fabric(),
        "--split-prefix",
        SPLIT_PREFIX,
        "--memory",
        Long.toString(options.memoryBytes()),
        "--l0-size",
        Long.toString(options.l0SizeBytes()),
        "--metrics",
        metrics);
    if (options.growthFactor() > 0) {
      Collections.addAll(
          clusterOptions, "--growth-factor", Integer.toString(options.growthFactor()));
    }
    if (options.shards() > 0) {
      Collections.addAll(clusterOptions, "--shards", Integer.toString(options.shards()));
    }
    try (LaunchedCluster cluster = LaunchedCluster.start(dir, clusterOptions, () -> {})) {
      Properties state = new Properties();
      try (Reader in = Files.newBufferedReader(dir.resolve("cluster.properties"))) {
        state.load(in);
      }
      Map<String, ServerInfo> servers =
          LocalStatus.liveServers(state.getProperty("zookeeper"), state.getProperty("cluster"));
      Path histogram = dir.resolve("field-lengths.txt");
      writeHistogram(mix, histogram);
      double kvBytes = averageKvBytes(mix);
      phase(round, label, rf, mix, "load-a", true, "a", servers, state, dir, histogram, kvBytes);
      for (String workload : options.workloads()) {
        phase(
            round,
            label,
            rf,
            mix,
            "run-" + workload,
            false,
            workload,
            servers,
            state,
            dir,
            histogram,
            kvBytes);
      }
      cluster.stop();
    }
  }

  private void phase(
      int round,
      String mode,
      int rf,
      KvMix mix,
      String label,
      boolean load,
      String workload,
      Map<String, ServerInfo> servers,
      Properties state,
      Path dir,
      Path histogram,
      double kvBytes)
      throws Exception {
    List<ServerSample> before = sample(servers, state, dir);
    YcsbPhase.Result ycsb =
        YcsbPhase.run(
            load,
            options.ycsbLib(),
            ycsbProperties(workload, dir, histogram),
            options.threads(),
            dir.resolve("ycsb-" + label + ".log"));
    List<ServerSample> after = sample(servers, state, dir);
    List<ServerSample> deltas = new ArrayList<>();
    for (int i = 0; i < before.size(); i++) {
      deltas.add(after.get(i).since(before.get(i)));
    }
    PhaseResult result =
        new PhaseResult(round, mode, rf, mix.name(), label, ycsb, deltas, after, kvBytes);
    results.add(result);
    ReplicationReport.printPhase(result);
    // A failed operation (the client's timeout ran out: a stalled server) is reported with the
    // case, which still counts, rather than losing the other cases' results.
    for (Map.Entry<String, YcsbPhase.Operation> op : ycsb.operations().entrySet()) {
      if (op.getValue().failures() > 0) {
        System.out.printf(
            "  ! %s: %d %s operations failed; see %s%n",
            label, op.getValue().failures(), op.getKey(), dir.resolve("ycsb-" + label + ".log"));
      }
    }
  }

  private static List<ServerSample> sample(
      Map<String, ServerInfo> servers, Properties state, Path dir) throws IOException {
    SecurityOptions security = SecurityOptions.forClusterDirectory(dir, "admin");
    List<ServerSample> samples = new ArrayList<>();
    for (ServerInfo server : servers.values()) {
      String pid = state.getProperty("pid.server-" + server.id());
      if (pid == null) {
        throw new IllegalStateException("no process of server " + server.id());
      }
      samples.add(
          ServerSample.take(Long.parseLong(pid), server.host(), server.controlPort(), security));
    }
    return samples;
  }

  private Map<String, String> ycsbProperties(String workload, Path dir, Path histogram) {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("workload", "site.ycsb.workloads.CoreWorkload");
    p.put("kvs.local.dir", dir.toString());
    p.put("kvs.transport", options.fabric().equals("shm") ? "fabric" : "tcp");
    p.put("recordcount", Long.toString(options.records()));
    p.put("operationcount", Long.toString(options.operations()));
    p.put("fieldcount", "1");
    p.put("fieldlengthdistribution", "histogram");
    p.put("fieldlengthhistogram", histogram.toString());
    p.put("readallfields", "true");
    p.put("writeallfields", "true");
    p.put("requestdistribution", workload.equals("d") ? "latest" : "zipfian");
    p.put("measurementtype", "hdrhistogram");
    p.put("hdrhistogram.percentiles", "50,99,99.9");
    double read;
    double update;
    double insert;
    switch (workload) {
      case "a" -> {
        read = 0.5;
        update = 0.5;
        insert = 0;
      }
      case "b" -> {
        read = 0.95;
        update = 0.05;
        insert = 0;
      }
      case "c" -> {
        read = 1;
        update = 0;
        insert = 0;
      }
      case "d" -> {
        read = 0.95;
        update = 0;
        insert = 0.05;
      }
      default -> throw new IllegalArgumentException("workload " + workload + " (a to d)");
    }
    p.put("readproportion", Double.toString(read));
    p.put("updateproportion", Double.toString(update));
    p.put("insertproportion", Double.toString(insert));
    p.put("scanproportion", "0");
    return p;
  }

  /**
   * YCSB's histogram distribution of field lengths: buckets of one byte from 0 (each line its
   * count), drawing the mix's classes with its percentages.
   */
  private static void writeHistogram(KvMix mix, Path file) throws IOException {
    long[] counts = new long[LARGE_FIELD + 1];
    counts[SMALL_FIELD] += mix.smallPercent();
    counts[MEDIUM_FIELD] += mix.mediumPercent();
    counts[LARGE_FIELD] += mix.largePercent();
    StringBuilder text = new StringBuilder("BlockSize\t1\n");
    for (int i = 0; i < counts.length; i++) {
      text.append(i).append('\t').append(counts[i]).append('\n');
    }
    Files.writeString(file, text);
  }

  private static double averageKvBytes(KvMix mix) {
    return KEY_BYTES
        + FIELD_OVERHEAD_BYTES
        + (mix.smallPercent() * SMALL_FIELD
                + mix.mediumPercent() * MEDIUM_FIELD
                + mix.largePercent() * LARGE_FIELD)
            / 100.0;
  }
}
