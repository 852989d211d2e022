package io.kvs.bench.conditional;

import io.kvs.bench.BarChart;
import io.kvs.bench.ServerCpu;
import io.kvs.bench.engine.Keys;
import io.kvs.client.CasResult;
import io.kvs.client.KvsClient;
import io.kvs.client.Mutation;
import io.kvs.client.Transport;
import io.kvs.tools.JsonLine;
import io.kvs.tools.LaunchedCluster;
import io.kvs.tools.TextTable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

/**
 * {@code ./kvs bench conditional [--quick]}: a put, a compare-and-set and an increment side by side
 * on one local cluster of processes (ZooKeeper, a master, three region servers, RF 2, send-index,
 * six regions of a fixed layout). Each phase runs closed loop with {@code in-flight} operations at
 * once, each slot on keys of its own (so every compare-and-set applies: what is measured is the
 * operation, not contention): puts of 100-byte values, compare-and-sets from the value the slot
 * last wrote to a new one, increments of 8-byte counters, and atomic batches of {@value
 * #BATCH_WRITES} puts of 100-byte values (one slot's keys, in one region; per write, CPU is
 * compared with a put's). Per phase: throughput, latency p50, p99, p99.9 and max (HdrHistogram),
 * and the three servers' CPU per operation (every thread, from {@code
 * /proc/<pid>/task/<tid>/schedstat}), with the ratios to the put. Then the same under contention:
 * every slot updates one of {@value #HOT_KEYS} hot keys by compare-and-set (a read, then compare-
 * and-sets from the value the last one found until one applies: an operation is one update, and
 * "tries/op" counts the compare-and-sets it took), and every slot increments one counter.
 *
 * <p>Prints a table, writes JSON lines to {@code target/bench/conditional.json} and draws {@code
 * conditional.png}. Usage: {@code [--quick] [--seconds N] [--keys N] [--in-flight N] [--out-dir
 * DIR] [--data-dir DIR]}. Quick: 15 s phases; full: 60 s, each phase twice in turn.
 */
public final class ConditionalBenchmark {
  private static final int SERVERS = 3;
  private static final int VALUE_BYTES = 100;
  private static final int HOT_KEYS = 4;
  private static final int BATCH_WRITES = 16;

  enum Op {
    PUT,
    CAS,
    INCREMENT,
    /** An atomic batch of {@link #BATCH_WRITES} puts to keys of one slot's key. */
    BATCH,
    /** Read-modify-write of one of {@link #HOT_KEYS} keys by every slot, by compare-and-set. */
    CAS_HOT,
    /** Every slot increments one counter. */
    INCREMENT_HOT
  }

  private record Options(
      Duration phase,
      int keys,
      int inFlight,
      int rounds,
      boolean quick,
      Path outDir,
      Path dataDir) {}

  private record Result(
      Op op,
      double opsPerSecond,
      Histogram latency,
      double cpuMicrosPerOp,
      double switchesPerOp,
      long failed,
      double triesPerOp,
      int writesPerOp) {
    double cpuMicrosPerWrite() {
      return cpuMicrosPerOp / writesPerOp;
    }
  }

  private ConditionalBenchmark() {}

  public static void main(String[] args) throws Exception {
    boolean quick = false;
    Integer seconds = null;
    int keys = 20_000;
    int inFlight = 64;
    Path outDir = Paths.get("target", "bench");
    Path dataDir = Paths.get("target", "bench", "data");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> quick = true;
        case "--seconds" -> seconds = Integer.parseInt(args[++i]);
        case "--keys" -> keys = Integer.parseInt(args[++i]);
        case "--in-flight" -> inFlight = Integer.parseInt(args[++i]);
        case "--out-dir" -> outDir = Paths.get(args[++i]);
        case "--data-dir" -> dataDir = Paths.get(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    run(
        new Options(
            Duration.ofSeconds(seconds != null ? seconds : quick ? 15 : 60),
            keys,
            inFlight,
            quick ? 1 : 2,
            quick,
            outDir,
            dataDir));
  }

  private static void run(Options options) throws Exception {
    Files.createDirectories(options.outDir());
    Path dir = options.dataDir().resolve("conditional");
    List<String> start =
        List.of(
            "--servers",
            Integer.toString(SERVERS),
            "--regions",
            "6",
            "--split-first-size",
            "0",
            "--merge-size",
            "0",
            "--replication",
            "2",
            "--mode",
            "send-index");
    System.out.printf("starting a cluster in %s%n", dir);
    List<Result> results = new ArrayList<>();
    try (LaunchedCluster cluster = LaunchedCluster.start(dir, start, () -> {})) {
      String[] connect = cluster.connect();
      List<Long> pids = new ArrayList<>();
      for (int s = 1; s <= SERVERS; s++) {
        cluster.process("server-s" + s).ifPresent(p -> pids.add(p.pid()));
      }
      try (KvsClient client =
          KvsClient.builder()
              .zookeeper(connect[0])
              .cluster(connect[1])
              .transport(Transport.TCP)
              .operationTimeout(Duration.ofSeconds(30))
              .security(
                  io.kvs.core.security.SecurityOptions.forClusterDirectory(cluster.dir(), "client"))
              .build()) {
        Load load = new Load(client, options.keys(), options.inFlight());
        load.prepare();
        for (int round = 0; round < options.rounds(); round++) {
          for (Op op : Op.values()) {
            System.out.printf(
                "%s: closed loop, %d in flight, %s%n", op, options.inFlight(), options.phase());
            long cpuBefore = ServerCpu.nanos(pids);
            long switchesBefore = ServerCpu.contextSwitches(pids);
            Load.Phase phase = load.run(op, options.phase());
            long cpu = ServerCpu.nanos(pids) - cpuBefore;
            long switches = ServerCpu.contextSwitches(pids) - switchesBefore;
            results.add(
                new Result(
                    op,
                    phase.operations() / (phase.nanos() / 1e9),
                    phase.latency(),
                    phase.operations() == 0 ? 0 : cpu / 1000.0 / phase.operations(),
                    phase.operations() == 0 ? 0 : switches / (double) phase.operations(),
                    phase.failed(),
                    phase.operations() == 0 ? 0 : phase.tries() / (double) phase.operations(),
                    op == Op.BATCH ? BATCH_WRITES : 1));
          }
        }
      }
    }
    report(options, results);
  }

  private static void report(Options options, List<Result> results) throws IOException {
    Result put = results.stream().filter(r -> r.op() == Op.PUT).findFirst().orElseThrow();
    TextTable table =
        new TextTable(
            1,
            "op",
            "ops/s",
            "p50 us",
            "p99 us",
            "p99.9 us",
            "max us",
            "server CPU us/op",
            "writes/op",
            "cs/op",
            "vs put: latency p50",
            "vs put: CPU/write",
            "tries/op",
            "failed");
    List<JsonLine> lines = new ArrayList<>();
    List<String> groups = new ArrayList<>();
    List<double[]> p50Rows = new ArrayList<>();
    List<double[]> p99Rows = new ArrayList<>();
    List<double[]> cpuRows = new ArrayList<>();
    for (Result result : results) {
      Histogram h = result.latency();
      double latencyRatio =
          h.getValueAtPercentile(50) / (double) Math.max(1, put.latency().getValueAtPercentile(50));
      double cpuRatio = result.cpuMicrosPerWrite() / Math.max(1e-9, put.cpuMicrosPerWrite());
      table.row(
          result.op().name().toLowerCase(Locale.ROOT),
          String.format(Locale.ROOT, "%,.0f", result.opsPerSecond()),
          Long.toString(h.getValueAtPercentile(50)),
          Long.toString(h.getValueAtPercentile(99)),
          Long.toString(h.getValueAtPercentile(99.9)),
          Long.toString(h.getMaxValue()),
          String.format(Locale.ROOT, "%.1f", result.cpuMicrosPerOp()),
          Integer.toString(result.writesPerOp()),
          String.format(Locale.ROOT, "%.2f", result.switchesPerOp()),
          String.format(Locale.ROOT, "%.2fx", latencyRatio),
          String.format(Locale.ROOT, "%.2fx", cpuRatio),
          String.format(Locale.ROOT, "%.2f", result.triesPerOp()),
          Long.toString(result.failed()));
      lines.add(
          new JsonLine()
              .put("op", result.op().name().toLowerCase(Locale.ROOT))
              .put("ops_per_sec", result.opsPerSecond())
              .put("p50_us", h.getValueAtPercentile(50))
              .put("p99_us", h.getValueAtPercentile(99))
              .put("p999_us", h.getValueAtPercentile(99.9))
              .put("max_us", h.getMaxValue())
              .put("server_cpu_us_per_op", result.cpuMicrosPerOp())
              .put("writes_per_op", result.writesPerOp())
              .put("server_cpu_us_per_write", result.cpuMicrosPerWrite())
              .put("context_switches_per_op", result.switchesPerOp())
              .put("latency_p50_vs_put", latencyRatio)
              .put("cpu_per_write_vs_put", cpuRatio)
              .put("failed", result.failed())
              .put("tries_per_op", result.triesPerOp())
              .put("in_flight", options.inFlight())
              .put("profile", options.quick() ? "quick" : "full"));
      groups.add(result.op().name().toLowerCase(Locale.ROOT));
      p50Rows.add(new double[] {h.getValueAtPercentile(50) / 1000.0});
      p99Rows.add(new double[] {h.getValueAtPercentile(99) / 1000.0});
      cpuRows.add(new double[] {result.cpuMicrosPerWrite()});
    }
    System.out.println();
    System.out.println(table);
    Path json = options.outDir().resolve("conditional.json");
    StringBuilder out = new StringBuilder();
    lines.forEach(line -> out.append(line).append('\n'));
    Files.writeString(json, out.toString(), StandardCharsets.UTF_8);
    Path chart = options.outDir().resolve("conditional.png");
    BarChart.write(
        chart,
        "Put vs compare-and-set vs increment vs atomic batch (RF 2, send-index, closed loop)",
        List.of("each phase"),
        List.of(
            new BarChart.Panel("latency p50", "ms", groups, p50Rows.toArray(new double[0][])),
            new BarChart.Panel("latency p99", "ms", groups, p99Rows.toArray(new double[0][])),
            new BarChart.Panel(
                "servers' CPU per write", "us", groups, cpuRows.toArray(new double[0][]))),
        3);
    System.out.println("results: " + json + ", chart: " + chart);
  }

  /**
   * The closed-loop load: slot {@code s} of {@code inFlight} owns keys {@code s, s + inFlight,
   * ...}, so it knows each one's value and its compare-and-sets apply.
   */
  static final class Load {
    record Phase(long operations, long failed, long nanos, Histogram latency, long tries) {}

    private final KvsClient client;
    private final int keys;
    private final int inFlight;
    private final byte[][] values;
    private final long[] written;

    Load(KvsClient client, int keys, int inFlight) {
      this.client = client;
      this.keys = keys - keys % inFlight;
      this.inFlight = inFlight;
      this.values = new byte[this.keys][];
      this.written = new long[this.keys];
    }

    /** Writes every key once (and waits for a cluster that takes writes). */
    void prepare() throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
      while (true) {
        try {
          client.put(Keys.of(0), value(0, 0));
          break;
        } catch (RuntimeException e) {
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException("the cluster takes no writes: " + e, e);
          }
          TimeUnit.MILLISECONDS.sleep(200); // a retry's pause; the cluster's state is not awaitable
        }
      }
      List<CompletableFuture<Void>> puts = new ArrayList<>();
      for (int k = 0; k < keys; k++) {
        values[k] = value(k, 0);
        puts.add(client.putAsync(Keys.of(k), values[k]));
        if (puts.size() == inFlight) {
          CompletableFuture.allOf(puts.toArray(CompletableFuture<?>[]::new)).join();
          puts.clear();
        }
      }
      CompletableFuture.allOf(puts.toArray(CompletableFuture<?>[]::new)).join();
    }

    private static byte[] value(int key, long version) {
      byte[] value = new byte[VALUE_BYTES];
      String text = key + ":" + version + ":";
      byte[] prefix = text.getBytes(StandardCharsets.UTF_8);
      System.arraycopy(prefix, 0, value, 0, Math.min(prefix.length, value.length));
      return value;
    }

    Phase run(Op op, Duration length) throws InterruptedException {
      Histogram latency = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
      AtomicLong operations = new AtomicLong();
      AtomicLong failed = new AtomicLong();
      AtomicLong tries = new AtomicLong();
      long started = System.nanoTime();
      long end = started + length.toNanos();
      List<Thread> slots = new ArrayList<>();
      for (int s = 0; s < inFlight; s++) {
        int slot = s;
        Thread thread =
            new Thread(
                () -> {
                  int next = slot;
                  Histogram mine = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
                  while (System.nanoTime() < end) {
                    long began = System.nanoTime();
                    try {
                      tries.addAndGet(operate(op, op == Op.CAS_HOT ? slot % HOT_KEYS : next));
                      mine.recordValue(
                          Math.min(
                              (System.nanoTime() - began) / 1000, mine.getHighestTrackableValue()));
                      operations.incrementAndGet();
                    } catch (RuntimeException e) {
                      failed.incrementAndGet();
                    }
                    next += inFlight;
                    if (next >= keys) {
                      next = slot;
                    }
                  }
                  synchronized (latency) {
                    latency.add(mine);
                  }
                },
                "conditional-" + s);
        thread.setDaemon(true);
        slots.add(thread);
        thread.start();
      }
      for (Thread thread : slots) {
        thread.join();
      }
      return new Phase(
          operations.get(), failed.get(), System.nanoTime() - started, latency, tries.get());
    }

    /** One operation on {@code key}; the requests it took (a hot compare-and-set's tries). */
    private int operate(Op op, int key) {
      byte[] name = Keys.of(key);
      switch (op) {
        case PUT -> {
          byte[] next = value(key, ++written[key]);
          client.put(name, next);
          values[key] = next;
        }
        case CAS -> {
          byte[] next = value(key, ++written[key]);
          CasResult result = client.compareAndSet(name, values[key], next);
          if (!result.isApplied()) {
            throw new IllegalStateException("key " + key + " changed under its only writer");
          }
          values[key] = next;
        }
        case CAS_HOT -> {
          // Read, then compare-and-set from what the last attempt found, until one applies.
          byte[] seen = client.get(name).orElse(null);
          for (int tries = 1; ; tries++) {
            byte[] next = value(key, ThreadLocalRandom.current().nextLong());
            CasResult result = client.compareAndSet(name, seen, next);
            if (result.isApplied()) {
              return tries;
            }
            seen = result.current().orElse(null);
          }
        }
        case INCREMENT -> client.increment(counterKey(key), 1);
        case BATCH -> {
          long version = ++written[key];
          List<Mutation> mutations = new ArrayList<>();
          for (int i = 0; i < BATCH_WRITES; i++) {
            mutations.add(Mutation.put(batchKey(key, i), value(key, version)));
          }
          client.writeAtomically(mutations);
        }
        case INCREMENT_HOT -> client.increment(counterKey(0), 1);
      }
      return 1;
    }

    /** Write {@code i} of key {@code key}'s batches: next to the key, in its region. */
    private static byte[] batchKey(int key, int i) {
      byte[] name = Keys.of(key);
      byte[] batch = new byte[name.length + 3];
      System.arraycopy(name, 0, batch, 0, name.length);
      batch[name.length] = '#';
      batch[name.length + 1] = 'b';
      batch[name.length + 2] = (byte) ('a' + i);
      return batch;
    }

    private static byte[] counterKey(int key) {
      byte[] name = Keys.of(key);
      byte[] counter = new byte[name.length + 2];
      System.arraycopy(name, 0, counter, 0, name.length);
      counter[name.length] = '#';
      counter[name.length + 1] = 'n';
      return counter;
    }
  }
}
