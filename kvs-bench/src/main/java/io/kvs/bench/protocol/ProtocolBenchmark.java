package io.kvs.bench.protocol;

import io.kvs.bench.BarChart;
import io.kvs.bench.ServerCpu;
import io.kvs.core.StatusCode;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import io.kvs.fabric.FabricClient;
import io.kvs.fabric.FabricOptions;
import io.kvs.tools.Directories;
import io.kvs.tools.JsonLine;
import io.kvs.tools.TextTable;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * {@code ./kvs bench protocol [--quick]}: round trips of the wire protocol over fabric {@code shm},
 * fabric {@code tcp}, the {@code stream} transport, and TCP to the native client door (the Java
 * client's Netty TCP transport), side by side, against one server process that answers them all
 * with the same native {@code RegionService} (gets of 100 B, 4 KiB and 64 KiB values), at 1 and 16
 * outstanding requests per client. Reports ops/s, the server process's CPU per request (every
 * thread: spinning, workers, shards), and latency percentiles, and each fabric transport over the
 * client door; a table, JSON lines in {@code target/bench/protocol.json} and a chart. (The Netty
 * front end it once also measured is gone; docs/BENCHMARKS.md keeps its numbers from then.) After
 * them, the machine's floor for the same round trips with none of KVS in it ({@link LoopbackFloor}:
 * loopback TCP between processes that block in epoll, one and two hops, blocking and spinning).
 *
 * <p>Usage: {@code [--quick] [--seconds N] [--workers N] [--out-dir DIR] [--data-dir DIR]}
 */
public final class ProtocolBenchmark {
  /** Value sizes the clients read. */
  static final int[] PAYLOADS = {100, 4096, 65536};

  private static final int[] OUTSTANDING = {1, 16};
  private static final List<String> TRANSPORTS =
      List.of("fabric-shm", "fabric-tcp", "fabric-stream", "native-tcp");

  private record Result(
      String transport,
      int payloadBytes,
      int outstanding,
      long operations,
      double seconds,
      double opsPerSec,
      double serverCpuUsPerOp,
      double p50,
      double p99,
      double p999) {}

  private ProtocolBenchmark() {}

  public static void main(String[] args) throws Exception {
    boolean quick = false;
    double seconds = -1;
    int workers = 2;
    Path outDir = Paths.get("target", "bench");
    Path dataDir = Paths.get("target", "bench", "data");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> quick = true;
        case "--seconds" -> seconds = Double.parseDouble(args[++i]);
        case "--workers" -> workers = Integer.parseInt(args[++i]);
        case "--out-dir" -> outDir = Paths.get(args[++i]);
        case "--data-dir" -> dataDir = Paths.get(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    double phaseSeconds = seconds > 0 ? seconds : quick ? 2 : 10;
    Files.createDirectories(dataDir);
    Path serverData = Files.createTempDirectory(dataDir, "protocol-");
    System.out.printf(
        "KVS protocol benchmark (%s): one server process, %d workers; gets of %s B; %s"
            + " outstanding; %.0f s per run after %.1f s warm-up%n",
        quick ? "quick" : "full",
        workers,
        java.util.Arrays.toString(PAYLOADS),
        java.util.Arrays.toString(OUTSTANDING),
        phaseSeconds,
        phaseSeconds / 4);
    Process server =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                ProtocolServerMain.class.getName(),
                serverData.toString(),
                Integer.toString(workers))
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    List<Result> results = new ArrayList<>();
    try {
      BufferedReader lines =
          new BufferedReader(
              new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
      // Its log may come first (the open client port's security warning).
      String ready = lines.readLine();
      String first = ready;
      while (ready != null && !ready.startsWith("READY ")) {
        ready = lines.readLine();
      }
      if (ready == null) {
        throw new IllegalStateException("the server process did not start: " + first);
      }
      String[] ports = ready.split(" ");
      for (String transport : TRANSPORTS) {
        for (int payload : PAYLOADS) {
          for (int outstanding : OUTSTANDING) {
            try (WireTransport client = connect(transport, ports)) {
              Result result = run(client, transport, payload, outstanding, phaseSeconds, server);
              results.add(result);
              System.out.printf(
                  Locale.ROOT,
                  "  %-10s %6d B x%-2d %,10.0f ops/s  server %7.2f us/op  p50 %8.1f us  p99 %8.1f"
                      + " us%n",
                  transport,
                  payload,
                  outstanding,
                  result.opsPerSec(),
                  result.serverCpuUsPerOp(),
                  result.p50(),
                  result.p99());
            }
          }
        }
      }
    } finally {
      server.getOutputStream().close();
      if (!server.waitFor(20, TimeUnit.SECONDS)) {
        server.destroyForcibly();
      }
      Directories.deleteRecursively(serverData);
    }
    List<LoopbackFloor.Result> floors = LoopbackFloor.measure(quick);
    report(results, outDir, quick, floors);
  }

  private static WireTransport connect(String transport, String[] ports) throws Exception {
    return switch (transport) {
      case "fabric-shm" -> fabric(FabricOptions.defaults("shm"), Integer.parseInt(ports[1]));
      case "fabric-tcp" -> fabric(FabricOptions.defaults("tcp"), Integer.parseInt(ports[2]));
      case "fabric-stream" -> fabric(FabricOptions.defaults("stream"), Integer.parseInt(ports[3]));
      case "native-tcp" -> new NettyWireClient("127.0.0.1", Integer.parseInt(ports[4]));
      default -> throw new IllegalArgumentException(transport);
    };
  }

  private static WireTransport fabric(FabricOptions options, int port) {
    FabricClient client = FabricClient.connect(options, "127.0.0.1", port);
    return new WireTransport() {
      @Override
      public CompletableFuture<Reply> send(Request request) {
        return client.send(request);
      }

      @Override
      public Reply call(Request request) {
        return client.call(request);
      }

      @Override
      public void close() {
        client.close();
      }
    };
  }

  /** Keeps {@code outstanding} gets in flight: warm-up, then a measured phase. */
  private static Result run(
      WireTransport client,
      String transport,
      int payload,
      int outstanding,
      double seconds,
      Process server)
      throws Exception {
    Request get =
        Request.get(
            0,
            ProtocolServerMain.REGION_ID,
            ProtocolServerMain.EPOCH,
            ProtocolServerMain.keyFor(payload));
    drive(client, get, outstanding, (long) (seconds / 4 * 1e9), null, new AtomicLong());
    Histogram latencies = new ConcurrentHistogram(3);
    AtomicLong completed = new AtomicLong();
    long cpuBefore = ServerCpu.nanos(server.pid());
    long start = System.nanoTime();
    drive(client, get, outstanding, (long) (seconds * 1e9), latencies, completed);
    double elapsed = (System.nanoTime() - start) / 1e9;
    long cpu = ServerCpu.nanos(server.pid()) - cpuBefore;
    long operations = completed.get();
    return new Result(
        transport,
        payload,
        outstanding,
        operations,
        elapsed,
        operations / elapsed,
        cpu / 1e3 / Math.max(1, operations),
        latencies.getValueAtPercentile(50) / 1e3,
        latencies.getValueAtPercentile(99) / 1e3,
        latencies.getValueAtPercentile(99.9) / 1e3);
  }

  private static void drive(
      WireTransport client,
      Request get,
      int outstanding,
      long nanos,
      Histogram latencies,
      AtomicLong completed)
      throws Exception {
    if (outstanding == 1) {
      driveBlocking(client, get, nanos, latencies, completed);
      return;
    }
    Semaphore window = new Semaphore(outstanding);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    long deadline = System.nanoTime() + nanos;
    while (System.nanoTime() < deadline && failure.get() == null) {
      if (!window.tryAcquire(100, TimeUnit.MILLISECONDS)) {
        continue;
      }
      long begin = System.nanoTime();
      client
          .send(get)
          .whenComplete(
              (reply, error) -> {
                if (error != null) {
                  failure.compareAndSet(null, error);
                } else if (reply.status() != StatusCode.OK) {
                  failure.compareAndSet(
                      null, new IllegalStateException("reply status " + reply.status()));
                } else {
                  if (latencies != null) {
                    latencies.recordValue(System.nanoTime() - begin);
                  }
                  completed.incrementAndGet();
                }
                window.release();
              });
    }
    if (!window.tryAcquire(outstanding, 30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("requests did not finish");
    }
    if (failure.get() != null) {
      throw new IllegalStateException("a request failed", failure.get());
    }
  }

  /** One request at a time through the transport's blocking call. */
  private static void driveBlocking(
      WireTransport client, Request get, long nanos, Histogram latencies, AtomicLong completed)
      throws Exception {
    long deadline = System.nanoTime() + nanos;
    while (System.nanoTime() < deadline) {
      long begin = System.nanoTime();
      Reply reply = client.call(get);
      if (reply.status() != StatusCode.OK) {
        throw new IllegalStateException("reply status " + reply.status());
      }
      if (latencies != null) {
        latencies.recordValue(System.nanoTime() - begin);
      }
      completed.incrementAndGet();
    }
  }

  private static void report(
      List<Result> results, Path outDir, boolean quick, List<LoopbackFloor.Result> floors)
      throws IOException {
    TextTable table =
        new TextTable(
            1,
            "transport",
            "payload",
            "outst.",
            "ops/s",
            "server us/op",
            "p50 us",
            "p99 us",
            "p99.9 us");
    List<String> json = new ArrayList<>();
    for (Result r : results) {
      table.row(
          r.transport(),
          Integer.toString(r.payloadBytes()),
          Integer.toString(r.outstanding()),
          String.format(Locale.ROOT, "%,.0f", r.opsPerSec()),
          String.format(Locale.ROOT, "%.2f", r.serverCpuUsPerOp()),
          String.format(Locale.ROOT, "%.1f", r.p50()),
          String.format(Locale.ROOT, "%.1f", r.p99()),
          String.format(Locale.ROOT, "%.1f", r.p999()));
      json.add(
          new JsonLine()
              .put("transport", r.transport())
              .put("payload_bytes", r.payloadBytes())
              .put("outstanding", r.outstanding())
              .put("ops_per_sec", r.opsPerSec())
              .put("server_cpu_us_per_op", r.serverCpuUsPerOp())
              .put("p50_us", r.p50())
              .put("p99_us", r.p99())
              .put("p999_us", r.p999())
              .put("operations", r.operations())
              .put("seconds", r.seconds())
              .put("profile", quick ? "quick" : "full")
              .toString());
    }
    System.out.println();
    System.out.print(table);
    System.out.println();
    for (String base : List.of("fabric-shm", "fabric-tcp", "fabric-stream")) {
      for (Result r : results) {
        if (!r.transport().equals(base)) {
          continue;
        }
        Result door = find(results, "native-tcp", r.payloadBytes(), r.outstanding());
        if (door == null) {
          continue;
        }
        double perCpu =
            (1e6 / r.serverCpuUsPerOp()) / (1e6 / Math.max(1e-9, door.serverCpuUsPerOp()));
        System.out.printf(
            Locale.ROOT,
            "  %s / native-tcp, %6d B x%-2d: ops/s %.2fx, round trips per server CPU-second"
                + " %.2fx, p50 %.2fx%n",
            base,
            r.payloadBytes(),
            r.outstanding(),
            r.opsPerSec() / door.opsPerSec(),
            perCpu,
            r.p50() / door.p50());
      }
    }
    LoopbackFloor.print(floors);
    for (LoopbackFloor.Result floor : floors) {
      json.add(floor.json(quick));
    }
    Files.createDirectories(outDir);
    Files.write(outDir.resolve("protocol.json"), json);
    List<String> groups = new ArrayList<>();
    for (int payload : PAYLOADS) {
      for (int outstanding : OUTSTANDING) {
        groups.add(payload + " B x" + outstanding);
      }
    }
    double[][] ops = new double[groups.size()][TRANSPORTS.size()];
    double[][] cpu = new double[groups.size()][TRANSPORTS.size()];
    double[][] p50 = new double[groups.size()][TRANSPORTS.size()];
    for (int g = 0; g < groups.size(); g++) {
      int payload = PAYLOADS[g / OUTSTANDING.length];
      int outstanding = OUTSTANDING[g % OUTSTANDING.length];
      for (int t = 0; t < TRANSPORTS.size(); t++) {
        Result r = find(results, TRANSPORTS.get(t), payload, outstanding);
        ops[g][t] = r == null ? Double.NaN : r.opsPerSec();
        cpu[g][t] = r == null ? Double.NaN : r.serverCpuUsPerOp();
        p50[g][t] = r == null ? Double.NaN : r.p50();
      }
    }
    BarChart.write(
        outDir.resolve("protocol.png"),
        "Wire protocol round trips: fabric shm, tcp, stream, the client door; same server handler",
        TRANSPORTS,
        List.of(
            new BarChart.Panel("Throughput", "ops/s", groups, ops),
            new BarChart.Panel("Server CPU per request", "us/op", groups, cpu),
            new BarChart.Panel("Median latency", "us", groups, p50)),
        3);
    System.out.println();
    System.out.println("results: " + outDir.resolve("protocol.json").toAbsolutePath());
    System.out.println("chart:   " + outDir.resolve("protocol.png").toAbsolutePath());
  }

  private static Result find(List<Result> results, String transport, int payload, int outst) {
    for (Result r : results) {
      if (r.transport().equals(transport)
          && r.payloadBytes() == payload
          && r.outstanding() == outst) {
        return r;
      }
    }
    return null;
  }
}
