package io.kvs.tools.demo;

import io.kvs.client.KvsClient;
import io.kvs.client.Transport;
import io.kvs.core.KeyValue;
import io.kvs.core.cli.Flags;
import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.security.SecurityOptions;
import io.kvs.tools.Latencies;
import io.kvs.tools.LaunchedCluster;
import io.kvs.tools.TextTable;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * {@code ./kvs demo}: a local cluster of separate processes (ZooKeeper, a master, three region
 * servers replicating in send-index mode), driven through the client library.
 *
 * <p>It starts the cluster (through {@code io.kvs.tools.local.LocalCluster}, in a fresh directory),
 * loads keys asynchronously, runs a mixed workload (50% reads, 45% updates, 5% scans) from several
 * threads with a live progress line, prints throughput, latency percentiles per operation and where
 * the regions live, checks a sample of keys and a scan of everything against what was written, and
 * stops the cluster, also when interrupted or failing. Exit status 0 if every operation succeeded
 * and every check passed, 1 otherwise, 2 for bad options.
 *
 * <pre>
 * ClusterDemo [--dir target/demo-cluster] [--servers 3] [--regions 16] [--replication 2]
 *             [--keys 20000] [--seconds 15] [--threads 8] [--transport tcp|fabric]
 * </pre>
 */
public final class ClusterDemo {
  private static final int LOAD_WINDOW = 128;
  private static final int SAMPLE = 2_000;

  private final PrintStream out = System.out;
  private final boolean terminal = System.console() != null;
  private final Path dir;
  private final int servers;
  private final int regions;
  private final int replication;
  private final int keys;
  private final int seconds;
  private final int threads;
  private final Transport transport;
  private final List<String> problems = new ArrayList<>();

  /** Set on Ctrl-C: from then on the demo prints nothing more and its client is closed. */
  private volatile boolean interrupted;

  private volatile KvsClient openClient;

  private ClusterDemo(Flags flags) {
    dir = Path.of(flags.get("dir", "target/demo-cluster"));
    servers = flags.getInt("servers", 3);
    regions = flags.getInt("regions", 16);
    replication = flags.getInt("replication", 2);
    keys = flags.getInt("keys", 20_000);
    seconds = flags.getInt("seconds", 15);
    threads = flags.getInt("threads", 8);
    transport =
        switch (flags.get("transport", "tcp").toLowerCase(Locale.ROOT)) {
          case "tcp" -> Transport.TCP;
          case "fabric" -> Transport.FABRIC;
          default -> throw new IllegalArgumentException("--transport is tcp or fabric");
        };
    if (servers < 1 || regions < 1 || keys < 1 || seconds < 1 || threads < 1) {
      throw new IllegalArgumentException("counts and durations must be positive");
    }
    if (replication < 2 || replication > 3 || replication > servers) {
      throw new IllegalArgumentException("--replication is 2 or 3, at most --servers");
    }
  }

  /** Runs the demo and exits with its status. */
  public static void main(String[] args) throws Exception {
    ClusterDemo demo;
    try {
      demo =
          new ClusterDemo(
              Flags.parse(
                  args,
                  java.util.Set.of(
                      "dir",
                      "servers",
                      "regions",
                      "replication",
                      "keys",
                      "seconds",
                      "threads",
                      "transport")));
    } catch (IllegalArgumentException e) {
      System.err.println("kvs demo: " + e.getMessage());
      System.exit(2);
      return;
    }
    System.exit(demo.run());
  }

  private int run() throws Exception {
    out.println("KVS cluster demo");
    note(
        "a cluster of separate processes on this machine: ZooKeeper, a master, %d region servers",
        servers);
    note(
        "%d regions, replication %d (send-index: a write is on every backup before it is"
            + " acknowledged; only primaries compact, backups install the indexes they ship)",
        regions, replication);
    note(
        "%,d keys, then %d s of reads, updates and scans from %d threads, over %s",
        keys,
        seconds,
        threads,
        transport == Transport.TCP
            ? "tcp (--transport fabric: the one-sided transport)"
            : "the fabric transport");

    heading("Starting the cluster in " + dir.toAbsolutePath().normalize());
    long start = System.nanoTime();
    LaunchedCluster cluster;
    try {
      cluster =
          LaunchedCluster.start(
              dir,
              List.of(
                  "--servers",
                  Integer.toString(servers),
                  "--regions",
                  Integer.toString(regions),
                  "--replication",
                  Integer.toString(replication),
                  "--mode",
                  "send-index"),
              this::interrupt);
    } catch (IllegalStateException e) {
      if (interrupted) {
        return 130;
      }
      out.println();
      out.println("demo FAILED: the cluster did not start: " + e.getMessage());
      return 1;
    }
    try {
      note(
          "up in %.1f s; each process logs to %s",
          seconds(start), cluster.dir().resolve("logs").resolve("<name>.log"));
      String[] connect = cluster.connect();
      try (KvsClient client =
          KvsClient.builder()
              .zookeeper(connect[0])
              .cluster(connect[1])
              .transport(transport)
              .operationTimeout(Duration.ofSeconds(15))
              .security(SecurityOptions.forClusterDirectory(cluster.dir(), "client"))
              .build()) {
        openClient = client;
        note(
            "client connected through ZooKeeper at %s: %d regions, all open",
            connect[0], client.regionMap().size());
        Expected expected = new Expected(keys);
        load(client, expected);
        workload(client, expected);
        placement(client.regionMap());
        check(client, expected);
      }
    } catch (RuntimeException e) {
      problems.add("the demo broke off: " + e);
    } finally {
      heading("Stopping the cluster (servers first: each hands its last writes to its backups)");
      long stop = System.nanoTime();
      cluster.close();
      note("stopped in %.1f s; its data and logs stay in %s", seconds(stop), cluster.dir());
    }
    if (interrupted) {
      return 130;
    }
    out.println();
    if (problems.isEmpty()) {
      out.println("demo passed: every operation succeeded and read back as written");
      return 0;
    }
    out.println("demo FAILED:");
    problems.forEach(problem -> out.println("  " + problem));
    return 1;
  }

  private void load(KvsClient client, Expected expected) throws InterruptedException {
    heading(
        String.format(
            Locale.ROOT,
            "Loading %,d keys: values of %d to %,d bytes, %d writes in flight",
            keys,
            DemoData.MIN_VALUE_BYTES,
            DemoData.MAX_VALUE_BYTES,
            LOAD_WINDOW));
    Loader loader = new Loader(client, expected, LOAD_WINDOW);
    long start = System.nanoTime();
    Progress progress =
        new Progress(
            out, terminal, "load", loader.done::get, loader.errors::get, () -> interrupted);
    try {
      loader.run();
    } finally {
      progress.close();
    }
    double took = seconds(start);
    note(
        "loaded %,d keys (%.1f MB of values) in %.1f s: %,.0f writes/s, %d errors",
        keys - loader.errors.get(),
        loader.bytes.get() / 1e6,
        took,
        keys / took,
        loader.errors.get());
    if (loader.errors.get() > 0) {
      problems.add(loader.errors.get() + " writes of the load failed, first: " + loader.firstError);
    }
  }

  private void workload(KvsClient client, Expected expected) throws InterruptedException {
    heading(
        String.format(
            Locale.ROOT,
            "Mixed workload: %d s, %d threads; %d%% reads, %d%% updates, %d%% scans of %d pairs",
            seconds,
            threads,
            MixedWorkload.Op.READ.percent,
            MixedWorkload.Op.UPDATE.percent,
            MixedWorkload.Op.SCAN.percent,
            MixedWorkload.SCAN_LENGTH));
    MixedWorkload workload = new MixedWorkload(client, expected, threads);
    long start = System.nanoTime();
    Latencies<MixedWorkload.Op> latencies;
    Progress progress =
        new Progress(
            out, terminal, "mixed", workload.done::get, workload.errors::get, () -> interrupted);
    try {
      latencies = workload.run(TimeUnit.SECONDS.toNanos(seconds));
    } finally {
      progress.close();
    }
    double took = seconds(start);
    long done = workload.done.get();
    note(
        "%,.0f operations/s: %,d operations in %.1f s, %d errors, %d wrong answers",
        done / took, done, took, workload.errors.get(), workload.wrong.get());
    out.println();
    TextTable table = new TextTable(1, "latency (us)", "count", "p50", "p99", "p99.9", "max");
    for (MixedWorkload.Op op : MixedWorkload.Op.values()) {
      row(table, op.name().toLowerCase(Locale.ROOT), latencies.of(op));
    }
    table.separator();
    row(table, "all", latencies.overall());
    print(table);
    if (workload.errors.get() > 0) {
      problems.add(workload.errors.get() + " operations failed, first: " + workload.firstError);
    }
    if (workload.wrong.get() > 0) {
      problems.add(workload.wrong.get() + " answers were wrong, first: " + workload.firstWrong);
    }
  }

  private static void row(TextTable table, String name, Latencies.Summary summary) {
    table.row(
        name,
        String.format(Locale.ROOT, "%,d", summary.count()),
        micros(summary.p50Micros()),
        micros(summary.p99Micros()),
        micros(summary.p999Micros()),
        micros(summary.maxMicros()));
  }

  private static String micros(double value) {
    return String.format(Locale.ROOT, "%,.0f", value);
  }

  private void placement(RegionMap map) {
    heading("Where the regions live");
    Map<String, List<Long>> primaries = new TreeMap<>();
    Map<String, List<Long>> backups = new TreeMap<>();
    Map<String, Integer> keysByPrimary = new TreeMap<>();
    for (RegionDescriptor region : map.regions()) {
      primaries.computeIfAbsent(region.primary(), s -> new ArrayList<>()).add(region.id());
      for (String backup : region.backups()) {
        backups.computeIfAbsent(backup, s -> new ArrayList<>()).add(region.id());
      }
    }
    for (int i = 0; i < keys; i++) {
      map.regionFor(DemoData.key(i))
          .ifPresent(region -> keysByPrimary.merge(region.primary(), 1, Integer::sum));
    }
    TreeMap<String, Boolean> all = new TreeMap<>();
    primaries.keySet().forEach(s -> all.put(s, true));
    backups.keySet().forEach(s -> all.put(s, true));
    TextTable table =
        new TextTable(3, "server", "primary of regions", "backup of regions", "keys as primary");
    for (String server : all.keySet()) {
      table.row(
          server,
          ids(primaries.getOrDefault(server, List.of())),
          ids(backups.getOrDefault(server, List.of())),
          String.format(Locale.ROOT, "%,d", keysByPrimary.getOrDefault(server, 0)));
    }
    print(table);
    long open = map.regions().stream().filter(r -> r.state() == RegionState.OPEN).count();
    note(
        "%d of %d regions open; each on %d servers: a primary and %d backup(s)",
        open, map.size(), replication, replication - 1);
  }

  private static String ids(List<Long> ids) {
    StringBuilder text = new StringBuilder();
    for (Long id : ids) {
      text.append(text.length() == 0 ? "" : " ").append(id);
    }
    return ids.size() + ": " + text;
  }

  private void check(KvsClient client, Expected expected) {
    heading("Checking what the cluster holds");
    SplittableRandom random = new SplittableRandom(42);
    int sample = Math.min(SAMPLE, keys);
    List<Integer> numbers = new ArrayList<>();
    List<byte[]> sampled = new ArrayList<>();
    for (int i = 0; i < sample; i++) {
      int key = sample == keys ? i : random.nextInt(keys);
      numbers.add(key);
      sampled.add(DemoData.key(key));
    }
    List<Optional<byte[]>> values = client.multiGet(sampled);
    int right = 0;
    String firstWrong = null;
    for (int i = 0; i < sample; i++) {
      if (expected.matches(numbers.get(i), values.get(i).orElse(null), true)) {
        right++;
      } else if (firstWrong == null) {
        firstWrong = "key " + numbers.get(i);
      }
    }
    note("multi-get of %,d random keys: %,d hold exactly the version last written", sample, right);
    if (right != sample) {
      problems.add(
          (sample - right) + " sampled keys differ from what was written, first: " + firstWrong);
    }

    long start = System.nanoTime();
    List<KeyValue> everything = client.scan(new byte[0], new byte[0], keys + 1);
    int valid = 0;
    byte[] previous = null;
    boolean ordered = true;
    for (KeyValue pair : everything) {
      int number = DemoData.keyNumber(pair.key());
      valid += number >= 0 && expected.matches(number, pair.value(), true) ? 1 : 0;
      ordered &= previous == null || Keys.compare(previous, pair.key()) < 0;
      previous = pair.key();
    }
    note(
        "scan of the whole key space (%d regions) in %.2f s: %,d pairs, %s, %,d as last written",
        client.regionMap().size(),
        seconds(start),
        everything.size(),
        ordered ? "in key order" : "OUT OF ORDER",
        valid);
    if (everything.size() != keys || valid != keys || !ordered) {
      problems.add(
          "the full scan returned "
              + everything.size()
              + " pairs ("
              + valid
              + " as written) for "
              + keys
              + " keys");
    }
  }

  /** Ctrl-C: quiet from now on, and close the client before the cluster goes away under it. */
  private void interrupt() {
    interrupted = true;
    KvsClient open = openClient;
    if (open != null) {
      open.close();
    }
  }

  private void heading(String text) {
    if (interrupted) {
      return;
    }
    out.println();
    out.println(terminal ? "\033[1m==> " + text + "\033[0m" : "==> " + text);
  }

  private void note(String format, Object... args) {
    if (interrupted) {
      return;
    }
    out.println("    " + String.format(Locale.ROOT, format, args));
  }

  private void print(TextTable table) {
    if (interrupted) {
      return;
    }
    table.toString().lines().forEach(line -> out.println("    " + line));
  }

  private static double seconds(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e9;
  }
}
