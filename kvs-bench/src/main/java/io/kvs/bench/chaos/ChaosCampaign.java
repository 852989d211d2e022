package io.kvs.bench.chaos;

import io.kvs.bench.history.History;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.LinearizabilityChecker;
import io.kvs.bench.history.Operation;
import io.kvs.bench.history.Verdict;
import io.kvs.tools.LaunchedCluster;
import io.kvs.tools.local.LocalCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code ./kvs chaos [--seed N] [--minutes M] [--quick]}: the seeded chaos campaign. A local
 * cluster of processes (ZooKeeper, two masters, four region servers at replication 3 in send-index
 * mode with 1 MiB in-memory levels, each server's directory on a loop-mounted file system of its
 * own) serves a recorded load of independent clients ({@link ChaosLoad}) while a schedule drawn
 * from the seed ({@link Schedule}) injects faults one after another, sometimes two at once: every
 * {@link FaultKind}. After each, it heals and waits for full strength ({@link FullStrength}). At
 * the end: the history is checked (per-key linearizability, no acknowledged write lost), {@code
 * LocalCluster verify} compares the replicas, the processes' deaths and logs are searched for
 * crashes nobody injected; the timeline and the verdict are printed, {@code chaos.json} and {@code
 * chaos.png} written ({@link ChaosReport}, {@link ChaosChart}). Exit status 0 only if every check
 * passed; 1 if one failed; 2 for bad options.
 *
 * <p>The same seed replays the same schedule (kinds, targets, durations, overlaps, pauses); the
 * victims a role names (the primary of region 3) depend on the run.
 */
public final class ChaosCampaign {
  private static final List<String> SERVERS = List.of("s1", "s2", "s3", "s4");
  private static final List<String> MASTERS = List.of("m1", "m2");
  private static final int REGIONS = 8;
  private static final int REPLICATION = 3;
  private static final long L0_BYTES = 1 << 20;
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(5);
  private static final int ERRORS_SHOWN = 12;
  private static final Duration FINAL_READS_BUDGET = Duration.ofSeconds(180);
  private static final Duration VERIFY_PATIENCE = Duration.ofSeconds(60);
  private static final int RECORDED_OPERATIONS_MAX = 8 << 20;
  private static final int DRY_RUN_STEPS = 50;

  private final ChaosOptions options;

  private ChaosCampaign(ChaosOptions options) {
    this.options = options;
  }

  public static void main(String[] args) {
    // Netty looks for a hardware address to seed its ids; a network namespace of loopback alone
    // has none, and it would warn about it.
    if (System.getProperty("io.netty.machineId") == null) {
      System.setProperty("io.netty.machineId", "02:00:00:00:00:01");
    }
    ChaosOptions options;
    try {
      options = ChaosOptions.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("kvs chaos: " + e.getMessage());
      System.err.println(ChaosOptions.USAGE);
      System.exit(2);
      return;
    }
    int status;
    try {
      status = new ChaosCampaign(options).run();
    } catch (Exception e) {
      System.err.println("kvs chaos: the campaign could not run: " + e);
      e.printStackTrace();
      status = 1;
    }
    System.exit(status);
  }

  /** What one run collected, for the checks after the cluster stopped. */
  private record Run(
      List<FaultRecord> faults,
      long originNanos,
      long endNanos,
      History history,
      KeySpace keys,
      double[] perSecond,
      long operationsOk,
      List<String> failures,
      LaunchedCluster.ToolRun verify,
      ClientErrors errors,
      MachineProbe machine,
      ZooKeeperProbe zookeeper) {}

  private int run() throws Exception {
    ChaosCluster.Layout layout = layout();
    System.out.printf(
        "chaos campaign: seed %d, %s profile%s%n"
            + "cluster: %d region servers at replication %d (send-index, %d regions, %d KiB"
            + " in-memory levels), %d masters, ZooKeeper; each server on a %d MiB loop disk%n"
            + "load: %d clients, at most %d operations/s each, on %d keys%n",
        options.seed(),
        options.quick() ? "quick" : "full",
        options.quick() ? "" : " (" + options.minutes() + " minutes)",
        SERVERS.size(),
        REPLICATION,
        REGIONS,
        L0_BYTES >> 10,
        MASTERS.size(),
        options.diskMib(),
        options.clients(),
        options.opsPerSecond(),
        options.keys());
    if (options.dryRun()) {
      Schedule schedule = schedule();
      int steps = options.quick() ? schedule.length() : DRY_RUN_STEPS;
      for (int i = 0; i < steps; i++) {
        System.out.println(schedule.step(i));
      }
      System.out.println("replay: " + options.replay());
      return 0;
    }
    List<String> problems = Preflight.problems();
    if (!problems.isEmpty()) {
      problems.forEach(problem -> System.err.println("kvs chaos: cannot run: " + problem));
      System.err.println("kvs chaos: every fault kind must run; FAILED before starting");
      return 1;
    }
    Cleanup cleanup = new Cleanup();
    ChaosCluster[] started = new ChaosCluster[1];
    Thread hook =
        new Thread(
            () -> {
              cleanup.closeAll();
              try {
                if (started[0] != null) {
                  started[0].close();
                }
              } catch (Exception e) {
                System.err.println("kvs chaos: cleaning up: " + e);
              }
            },
            "chaos-cleanup");
    Runtime.getRuntime().addShutdownHook(hook);
    Run run;
    List<String> undone = new ArrayList<>();
    try {
      started[0] = ChaosCluster.start(layout, () -> System.out.println("interrupted: cleaning up"));
      run = campaign(started[0], cleanup);
    } finally {
      undone.addAll(cleanup.closeAll());
      try {
        if (started[0] != null) {
          started[0].close();
        }
      } catch (Exception e) {
        undone.add("stopping the cluster and unmounting its disks: " + e);
      }
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // the hook runs
      }
    }
    return report(layout, started[0], run, undone);
  }

  private Schedule schedule() {
    return new Schedule(
        options.seed(),
        options.quick(),
        options.kinds(),
        new Schedule.Layout(
            SERVERS,
            MASTERS,
            REGIONS,
            options.sessionTimeoutMillis(),
            // ./kvs local start's default for the masters.
            LocalCluster.defaultMasterSessionMillis(options.sessionTimeoutMillis())));
  }

  private ChaosCluster.Layout layout() {
    Path data = options.dataDir().toAbsolutePath().normalize();
    Path zookeeperLog = zookeeperLogDir(data);
    List<String> start =
        List.of(
            "--servers",
            Integer.toString(SERVERS.size()),
            "--masters",
            Integer.toString(MASTERS.size()),
            "--regions",
            Integer.toString(REGIONS),
            "--split-first-size", // its schedule names regions by id: a fixed layout
            "0",
            "--merge-size",
            "0",
            "--replication",
            Integer.toString(REPLICATION),
            "--mode",
            "send-index",
            "--l0-size",
            Long.toString(L0_BYTES),
            "--session-timeout-ms",
            Integer.toString(options.sessionTimeoutMillis()),
            "--zookeeper-log-dir",
            zookeeperLog.toString(),
            "--fabric",
            options.fabric());
    return new ChaosCluster.Layout(
        data.resolve("chaos"),
        data.resolve("chaos-disks"),
        zookeeperLog,
        (long) options.diskMib() << 20,
        SERVERS,
        MASTERS,
        REGIONS,
        REPLICATION,
        start);
  }

  /**
   * Where ZooKeeper keeps its transaction log: in memory ({@code /dev/shm}), a directory per data
   * directory. Every server's loop disk and engine share the one disk this machine has, and a
   * standalone ZooKeeper answers nothing, pings included, while a write waits for that log's fsync:
   * behind the servers' writes such an fsync took over a second, every session waited on it, and
   * some lapsed with nothing injected. Its administrators' guide asks for a device of the log's
   * own; memory is the one such device here. ZooKeeper is never a victim of the campaign, so what a
   * power cut would do to that log is not in question. Without {@code /dev/shm}, beside the data.
   */
  static Path zookeeperLogDir(Path data) {
    Path memory = Path.of("/dev/shm");
    if (!Files.isDirectory(memory) || !Files.isWritable(memory)) {
      return data.resolve("chaos-zookeeper-log");
    }
    return memory.resolve(
        "kvs-chaos-zookeeper-log-" + Integer.toHexString(data.toString().hashCode()));
  }

  private Run campaign(ChaosCluster cluster, Cleanup cleanup) throws Exception {
    List<String> failures = new ArrayList<>();
    FullStrength strength = new FullStrength(cluster);
    Optional<String> initial = strength.await(StepRunner.FULL_STRENGTH_TIMEOUT);
    if (initial.isPresent()) {
      failures.add("the new cluster never reached full strength: " + initial.get());
    }
    KeySpace keys = new KeySpace(options.keys(), cluster.regions());
    long secondsMax = options.quick() ? 1_800 : options.minutes() * 60L + 1_800;
    int recorded =
        (int)
            Math.min(
                RECORDED_OPERATIONS_MAX,
                options.clients() * options.opsPerSecond() * secondsMax * 2);
    HistoryRecorder recorder = new HistoryRecorder(recorded);
    MachineProbe machine = MachineProbe.start();
    ZooKeeperProbe zookeeperProbe = ZooKeeperProbe.start(cluster.zookeeper());
    long origin = System.nanoTime();
    // The processes log wall-clock times; the timeline counts from here.
    System.out.printf("time 0 s: %s%n", Instant.now());
    Throughput throughput = new Throughput(origin, (int) secondsMax);
    ChaosLoad load =
        new ChaosLoad(
            cluster.zookeeper(),
            cluster.clientSecurity(),
            keys,
            recorder,
            options.clients(),
            options.opsPerSecond(),
            OPERATION_TIMEOUT,
            options.seed(),
            throughput);
    load.start();
    awaitLoad(load, failures);
    Schedule schedule = schedule();
    StepRunner runner = new StepRunner(cluster, new Faults(cluster, cleanup), strength, origin);
    long deadline = origin + TimeUnit.MINUTES.toNanos(options.minutes());
    if (failures.isEmpty()) {
      for (int i = 0; options.quick() ? i < schedule.length() : System.nanoTime() < deadline; i++) {
        Step step = schedule.step(i);
        System.out.println("-- " + step);
        if (!runner.run(step)) {
          failures.add("stopped injecting after step " + step.number() + ": not at full strength");
          break;
        }
      }
    }
    load.stop();
    long end = System.nanoTime();
    machine.close();
    zookeeperProbe.close();
    System.out.println("load stopped; reading every key once more");
    List<String> unread = load.finalReads(FINAL_READS_BUDGET);
    if (!unread.isEmpty()) {
      failures.add(
          "final reads: " + unread.size() + " keys could not be read, e.g. " + unread.get(0));
    }
    if (load.trouble() != null) {
      failures.add("load: " + load.trouble());
    }
    System.out.println("comparing the replicas (LocalCluster verify)");
    LaunchedCluster.ToolRun verify = cluster.verify(VERIFY_PATIENCE);
    strength.close();
    return new Run(
        runner.records(),
        origin,
        end,
        recorder.history(),
        keys,
        throughput.series((int) Math.ceil((end - origin) / 1e9)),
        load.succeeded(),
        failures,
        verify,
        load.errors(),
        machine,
        zookeeperProbe);
  }

  /**
   * Prints what the clients were told while the least available region served no one (at most
   * {@link #ERRORS_SHOWN} distinct messages, most frequent first): what explains the stretch.
   */
  private static void printErrorsDuring(Unavailability.Worst worst, Run run) {
    if (worst == null || worst.millis() <= 0) {
      return;
    }
    long to = worst.fromNanos() + TimeUnit.MILLISECONDS.toNanos(worst.millis());
    List<ClientErrors.Seen> seen = run.errors().during(worst.fromNanos(), to);
    System.out.printf(
        "clients' errors while region %d served no one (%.1f s to %.1f s): %d distinct%s%n",
        worst.region(),
        (worst.fromNanos() - run.originNanos()) / 1e9,
        (to - run.originNanos()) / 1e9,
        seen.size(),
        run.errors().dropped() > 0
            ? " (" + run.errors().dropped() + " failures past the bound not kept)"
            : "");
    for (ClientErrors.Seen one : seen.subList(0, Math.min(ERRORS_SHOWN, seen.size()))) {
      System.out.printf(
          "  %6d x  %.1f-%.1f s  %s%n",
          one.count(),
          (one.firstNanos() - run.originNanos()) / 1e9,
          (one.lastNanos() - run.originNanos()) / 1e9,
          one.message());
    }
  }

  /**
   * The length past which a region's stretch without service is listed: the bound checked, or
   * without one the bound the design promises (the session timeout + 2 s).
   */
  static long unavailabilityBound(ChaosOptions options) {
    return options.maxUnavailableMillis() > 0
        ? options.maxUnavailableMillis()
        : options.sessionTimeoutMillis() + 2_000L;
  }

  /**
   * Waits until the load has had some successes (the cluster serves it) and ran for a few seconds
   * (the chart's baseline) before any fault.
   */
  private static void awaitLoad(ChaosLoad load, List<String> failures) {
    long started = System.nanoTime();
    long deadline = started + TimeUnit.SECONDS.toNanos(60);
    while (load.succeeded() < 200 || System.nanoTime() - started < TimeUnit.SECONDS.toNanos(5)) {
      if (System.nanoTime() > deadline) {
        failures.add("the load had " + load.succeeded() + " successful operations in 60 s");
        return;
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // counting the load's progress
    }
  }

  private int report(ChaosCluster.Layout layout, ChaosCluster cluster, Run run, List<String> undone)
      throws Exception {
    List<String> failures = new ArrayList<>(run.failures());
    for (FaultRecord fault : run.faults()) {
      for (String error : fault.errors()) {
        failures.add(
            "fault "
                + fault.number
                + " ("
                + fault.kind().label
                + " "
                + fault.victim()
                + "): "
                + error);
      }
    }
    for (FaultKind kind : options.kinds()) {
      if (run.faults().stream().noneMatch(f -> f.kind() == kind && f.ran())) {
        failures.add("fault kind " + kind.label + " never ran");
      }
    }
    System.out.println("checking the history of " + run.history().size() + " operations");
    Verdict verdict = new LinearizabilityChecker().check(run.history());
    Files.createDirectories(options.outDir());
    if (!verdict.lostWrites().isEmpty()) {
      failures.add(
          verdict.lostWrites().size()
              + " acknowledged writes lost, e.g. "
              + verdict.lostWrites().get(0).explanation());
    }
    if (!verdict.isLinearizable()) {
      failures.add("the history is not linearizable: " + verdict.summary());
    }
    if (!verdict.isLinearizable() || !verdict.lostWrites().isEmpty()) {
      Path kept = options.outDir().resolve("chaos-history.jsonl");
      run.history().writeJsonLines(kept);
      failures.add("history kept in " + kept + "; " + firstLines(verdict.describe(), 12));
    }
    String verifySummary = lastLine(run.verify().output());
    Files.writeString(
        options.outDir().resolve("chaos-verify.txt"),
        run.verify().output(),
        StandardCharsets.UTF_8);
    if (run.verify().status() != 0) {
      failures.add(
          "verify: " + verifySummary + " (" + options.outDir().resolve("chaos-verify.txt") + ")");
    }
    List<String> crashes = Crashes.find(cluster, layout);
    crashes.forEach(crash -> failures.add("crash not injected: " + crash));
    Unavailability unavailability =
        Unavailability.of(run.history(), run.keys(), run.endNanos(), unavailabilityBound(options));
    Unavailability.Worst worst = unavailability.worst();
    if (options.maxUnavailableMillis() > 0) {
      // Every stretch listed is past the bound (unavailabilityBound), checked as measured; the
      // time the machine stood still in it is told.
      for (Unavailability.Stretch stretch : unavailability.over()) {
        failures.add(
            String.format(
                Locale.ROOT,
                "region %d served no one for %d ms at %.1f s (the machine stood still %d ms of"
                    + " it; bound %d ms)",
                stretch.region(),
                stretch.millis(),
                (stretch.fromNanos() - run.originNanos()) / 1e9,
                run.machine().stoodStillMillis(stretch.fromNanos(), stretch.toNanos()),
                options.maxUnavailableMillis()));
      }
    }
    undone.forEach(what -> failures.add("could not undo: " + what));
    long writes =
        run.history().operations().stream()
            .filter(op -> op.isWrite() && op.outcome() == Operation.Outcome.OK)
            .count();
    Path chart = options.outDir().resolve("chaos.png");
    ChaosChart.write(
        chart,
        "Chaos campaign, seed " + options.seed() + ": throughput with the faults",
        run.perSecond(),
        run.faults(),
        run.originNanos());
    ChaosReport report =
        new ChaosReport(
            new ChaosReport.Inputs(
                options,
                layout,
                run.faults(),
                run.originNanos(),
                run.endNanos(),
                run.history().size(),
                run.operationsOk(),
                writes,
                verdict,
                unavailability,
                crashes,
                run.verify().status() == 0,
                verifySummary,
                failures,
                chart.toString(),
                run.machine(),
                run.zookeeper()));
    Path json = options.outDir().resolve("chaos.json");
    report.writeJson(json);
    System.out.println();
    System.out.println("timeline (seconds since the load started; + overlapping):");
    System.out.print(report.timeline());
    System.out.println();
    System.out.print(report.stretches());
    System.out.print(report.verdict());
    printErrorsDuring(worst, run);
    System.out.println("results: " + json + ", chart: " + chart);
    return failures.isEmpty() ? 0 : 1;
  }

  private static String lastLine(String text) {
    String[] lines = text.strip().split("\n");
    return lines.length == 0 ? "" : lines[lines.length - 1].strip();
  }

  private static String firstLines(String text, int count) {
    String[] lines = text.split("\n");
    return String.join("\n    ", java.util.Arrays.copyOf(lines, Math.min(count, lines.length)));
  }
}
