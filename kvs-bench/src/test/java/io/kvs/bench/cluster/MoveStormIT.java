package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.bench.history.History;
import io.kvs.bench.history.HistoryRecorder;
import io.kvs.bench.history.Verdict;
import io.kvs.client.KvsClient;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.security.SecurityOptions;
import io.kvs.tools.ClusterTarget;
import io.kvs.tools.admin.Admin;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regions demoted, dropped and promoted under requests in flight, with the region servers running
 * the AddressSanitizer build of libkvs (issue 25, hole 4: a request kept a raw engine region after
 * dropping the service's lock, and a demotion dropped the region right after detaching it, so a
 * request in flight could read freed memory). Four servers at replication 3 (send-index, 1 MiB L0s,
 * so data reaches the device levels), under a pipelined load of three clients with 32 operations in
 * flight each (puts, deletes, gets recorded for the history checker; scans of a whole region and
 * multi-gets of a fixed set of mostly large pairs, checked exactly: a scan reads megabytes, so one
 * is often still reading when a demotion drops its region), while a storm of planned moves hands
 * every region's primary from server to server (each handover demotes the old primary, which
 * detaches and drops its engine region, and promotes a backup), with scans of the region in flight
 * throughout each move. Checked: the servers ran the ASan build and none wrote a sanitizer report
 * (a report fails the test with its first lines, whatever else failed after it), none crashed or
 * restarted, the history is linearizable with no acknowledged write lost, every scan and multi-get
 * answered the fixed pairs, and {@code LocalCluster verify} finds every backup holding what its
 * primary holds. With the gate that keeps a region for the requests using it taken out (a request
 * leaving it as soon as it entered), the storm reports the heap-use-after-free in {@code
 * RegionIterator::ReadPairs} of a region {@code Engine::DropRegion} freed (docs/ARCHITECTURE.md,
 * "Region servers on an AddressSanitizer build").
 */
class MoveStormIT {
  private static final int SERVERS = 4;
  private static final int REGIONS = 4;
  private static final int REPLICATION = 3;
  private static final int CLIENTS = 3;
  private static final int DEPTH = 32;
  private static final int KEYS = 256;
  private static final int FIXED_KEYS = REGIONS * 500;
  private static final Duration STORM = Duration.ofSeconds(30);

  /** Scans of a region in flight while its primary moves (besides the load's). */
  private static final int SCANS_WHILE_MOVING = 2;

  /** Writes the load must have made between the steps: it goes on throughout. */
  private static final int PROGRESS_WRITES = 50;

  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration AWAIT = Duration.ofSeconds(120);

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  static Path dir;

  @Test
  void aMoveStormUnderPipelinedLoadOnTheAsanBuildReportsNothingAndLosesNothing() throws Throwable {
    Path logs = dir.resolve("cluster").resolve("logs");
    try {
      moveStorm(logs);
    } catch (Throwable failure) {
      throw AsanBuild.withReports(logs, failure);
    }
  }

  private static void moveStorm(Path logs) throws Exception {
    long started = System.nanoTime();
    Path library = AsanBuild.library();
    progress(started, "ASan build of libkvs at " + library);
    HistoryRecorder recorder = new HistoryRecorder(1 << 21);
    PipelinedLoad load;
    int handovers;
    try (ProcessCluster cluster =
            ProcessCluster.start(
                dir.resolve("cluster"),
                "--servers",
                Integer.toString(SERVERS),
                "--regions",
                Integer.toString(REGIONS),
                "--replication",
                Integer.toString(REPLICATION),
                "--l0-size",
                Integer.toString(1 << 20),
                "--native-library",
                library.toString());
        KvsClient reader = cluster.client(OPERATION_TIMEOUT)) {
      progress(started, "cluster started");
      Map<String, Long> pids = new TreeMap<>();
      for (int i = 1; i <= SERVERS; i++) {
        String name = "server-s" + i;
        long pid = cluster.process(name).pid();
        AsanBuild.assertRunsIt(name, pid, library);
        pids.put(name, pid);
      }
      ProcessCluster.awaitFullStrength(reader, REGIONS, REPLICATION, AWAIT);
      progress(started, "every group whole");
      NavigableMap<byte[], byte[]> fixed = PipelinedLoad.writeFixed(reader, "fixed", FIXED_KEYS);
      progress(started, FIXED_KEYS + " fixed pairs written");
      List<KvsClient> clients = new ArrayList<>();
      try {
        for (int i = 0; i < CLIENTS; i++) {
          clients.add(cluster.client(OPERATION_TIMEOUT));
        }
        load = PipelinedLoad.start(clients, recorder, "storm", KEYS, DEPTH, fixed);
        load.awaitMoreWrites(PROGRESS_WRITES, AWAIT);
        ClusterTarget target = new ClusterTarget(cluster.zookeeper(), "default");
        SecurityOptions security = SecurityOptions.forClusterDirectory(cluster.dir(), "admin");
        progress(started, "load running");
        handovers = storm(target, security, load, reader, pids, 1);
        progress(started, handovers + " handovers in the storm");
        load.awaitMoreWrites(PROGRESS_WRITES, AWAIT);
        load.stop(OPERATION_TIMEOUT.multipliedBy(2));
      } finally {
        for (KvsClient client : clients) {
          client.close();
        }
      }
      ProcessCluster.awaitFullStrength(reader, REGIONS, REPLICATION, AWAIT);
      load.finalReads(reader, CLIENTS);
      assertThat(load.checkAllFixed(reader)).as("the fixed pairs after the storm").isEmpty();
      cluster.verify();
      progress(started, "verified");
      for (Map.Entry<String, Long> server : pids.entrySet()) {
        assertThat(cluster.process(server.getKey()).pid())
            .as(server.getKey() + " is the process that started (it neither crashed nor restarted)")
            .isEqualTo(server.getValue());
      }
    }
    // Stopping the servers is part of the check: a bad access on the way out is reported too.
    assertThat(AsanBuild.reports(logs)).as("sanitizer reports of the servers").isEmpty();
    assertThat(handovers)
        .as("primaries handed over (each demoting and dropping one)")
        .isGreaterThan(8);
    assertThat(load.wrongAnswers()).as("scans and multi-gets of the fixed pairs").isEmpty();
    assertThat(load.scansAnswered()).as("scans and multi-gets answered").isPositive();
    History history = recorder.history();
    Verdict verdict = RecordedLoad.check(history, dir.resolve("history-move-storm.jsonl"));
    assertThat(verdict.isLinearizable()).as(verdict.describe()).isTrue();
    assertThat(verdict.lostWrites()).isEmpty();
    System.out.printf(
        "MoveStormIT: %d handovers; %d operations recorded, %d writes acknowledged, %d scans and"
            + " multi-gets checked, %d operations failed %s; %s%n",
        handovers,
        history.size(),
        load.writesAcknowledged(),
        load.scansAnswered(),
        load.failed(),
        load.failures(),
        verdict.summary());
  }

  private static void progress(long started, String what) {
    System.out.printf("MoveStormIT: %5.1f s: %s%n", (System.nanoTime() - started) / 1e9, what);
  }

  /**
   * Moves every region's primary to one of its backups in sync, again and again, all regions at
   * once, for {@link #STORM}; the number of handovers done. Every move must succeed, and every one
   * of {@code servers} (name to pid) stay alive.
   */
  private static int storm(
      ClusterTarget target,
      SecurityOptions security,
      PipelinedLoad load,
      KvsClient client,
      Map<String, Long> servers,
      long seed)
      throws Exception {
    AtomicInteger moves = new AtomicInteger();
    ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
    long deadline = System.nanoTime() + STORM.toNanos();
    List<Thread> threads = new ArrayList<>();
    for (RegionDescriptor region : client.regionMap().regions()) {
      long id = region.id();
      Thread thread =
          new Thread(
              () -> {
                Random random = new Random(seed * 1_000 + id);
                try (Admin admin = Admin.connect(target, security, Duration.ofSeconds(30))) {
                  while (System.nanoTime() < deadline) {
                    String to = awaitTarget(admin, id, random);
                    admin.requestMove(id, to);
                    String failed =
                        whileScanning(
                            load, client, region.start(), () -> admin.awaitMove(id, to, AWAIT));
                    if (failed != null) {
                      throw new AssertionError(
                          "the move of region " + id + " to " + to + ": " + failed);
                    }
                    moves.incrementAndGet();
                  }
                } catch (Throwable e) {
                  errors.add(e);
                }
              },
              "storm-region-" + id);
      thread.start();
      threads.add(thread);
    }
    for (Thread thread : threads) {
      while (thread.isAlive()) {
        thread.join(200);
        // A server a sanitizer report ended stalls its regions' moves until they time out: stop.
        Optional<String> gone = exited(servers);
        if (gone.isPresent()) {
          threads.forEach(Thread::interrupt);
          throw new AssertionError(gone.get() + " exited during the move storm");
        }
      }
    }
    if (!errors.isEmpty()) {
      AssertionError failure = new AssertionError("the move storm failed: " + errors.peek());
      errors.forEach(failure::addSuppressed);
      throw failure;
    }
    return moves.get();
  }

  /**
   * Calls {@code work} with {@link #SCANS_WHILE_MOVING} scans of the region starting at {@code
   * start} in flight throughout, through {@code client}: requests that the old primary's demotion
   * meets, as the load's own would, only more of them.
   */
  private static <T> T whileScanning(
      PipelinedLoad load, KvsClient client, byte[] start, Callable<T> work) throws Exception {
    AtomicBoolean done = new AtomicBoolean();
    Semaphore inFlight = new Semaphore(SCANS_WHILE_MOVING);
    Thread scanner =
        new Thread(
            () -> {
              try {
                while (!done.get()) {
                  if (inFlight.tryAcquire(50, TimeUnit.MILLISECONDS)) {
                    load.scanSliceOf(client, start)
                        .whenComplete((pairs, error) -> inFlight.release());
                  }
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "scans-while-moving");
    scanner.start();
    try {
      return work.call();
    } finally {
      done.set(true);
      scanner.join();
      // Each scan is bounded by the client's operation timeout.
      inFlight.tryAcquire(
          SCANS_WHILE_MOVING, OPERATION_TIMEOUT.multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /** The first of {@code servers} (name to pid) whose process is no longer alive. */
  private static Optional<String> exited(Map<String, Long> servers) {
    return servers.entrySet().stream()
        .filter(
            server ->
                !ProcessHandle.of(server.getValue()).map(ProcessHandle::isAlive).orElse(false))
        .map(Map.Entry::getKey)
        .findFirst();
  }

  /**
   * A backup of region {@code id} a move may go to (in sync), once the region is open and has one.
   */
  private static String awaitTarget(Admin admin, long id, Random random) throws Exception {
    long deadline = System.nanoTime() + AWAIT.toNanos();
    while (true) {
      RegionDescriptor region = admin.region(id);
      List<String> candidates =
          region.backups().stream().filter(backup -> !region.joining().contains(backup)).toList();
      if (region.state() == RegionState.OPEN && !candidates.isEmpty()) {
        return candidates.get(random.nextInt(candidates.size()));
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("region " + id + " had no backup in sync within " + AWAIT);
      }
      Thread.sleep(100); // polling ZooKeeper at a bounded rate, as ./kvs admin waits
    }
  }
}
