package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.fail;

import io.kvs.client.KvsClient;
import io.kvs.client.Transport;
import io.kvs.core.cli.Processes;
import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ZooKeeperReads;
import io.kvs.core.security.SecurityOptions;
import io.kvs.tools.ClassPathJar;
import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;

/**
 * A local cluster of processes for integration tests, run by {@code
 * io.kvs.tools.local.LocalCluster} in a JVM of its own on this test JVM's class path (so its
 * ZooKeeper, masters and region servers are separate processes, as {@code ./kvs local start} runs
 * them). It stops and restarts single processes the way an operator would: SIGTERM, wait for the
 * exit, start the same command again; a restarted server is recorded in {@code cluster.properties}
 * so that {@link #close()} ({@code LocalCluster stop}) stops it too.
 */
final class ProcessCluster implements AutoCloseable {
  private static final String LOCAL_CLUSTER = "io.kvs.tools.local.LocalCluster";
  private static final String REGION_SERVER = "io.kvs.server.RegionServerMain";
  private static final Duration START_TIMEOUT = Duration.ofMinutes(3);
  private static final Duration STOP_TIMEOUT = Duration.ofMinutes(3);

  /**
   * The smallest L0 a region server takes (1 MiB): a test that starts its cluster with {@code
   * --l0-size SMALL_L0} and writes a few MiB per region has data in every region's device levels,
   * which {@link #verify()} requires.
   */
  static final String SMALL_L0 = Integer.toString(1 << 20);

  private final Path dir;
  private final List<Process> spawned = new ArrayList<>();
  // The servers' options of LocalCluster start that startServer gives a server again.
  private final List<String> serverOptions = new ArrayList<>();
  private boolean stopped;

  private ProcessCluster(Path dir) {
    this.dir = dir;
  }

  /**
   * Starts a cluster in {@code dir} ({@code LocalCluster start --dir dir options...}); returns once
   * every region is open. A start that fails stops whatever it started. The regions the options
   * give stay as they are unless the test asks for splits or merges: without {@code
   * --split-first-size} the master's first split size does not step ({@code 0}; splits at {@code
   * --split-size} only), without {@code --merge-size} it merges nothing by itself ({@code 0}).
   */
  static ProcessCluster start(Path dir, String... options) throws Exception {
    List<String> fixed = new ArrayList<>(List.of(options));
    if (!fixed.contains("--split-first-size")) {
      fixed.addAll(List.of("--split-first-size", "0"));
    }
    if (!fixed.contains("--merge-size")) {
      fixed.addAll(List.of("--merge-size", "0"));
    }
    return startWith(dir, fixed);
  }

  /** Starts a cluster in {@code dir} as {@code ./kvs local start} does: every default. */
  static ProcessCluster startWithDefaults(Path dir) throws Exception {
    return startWith(dir, List.of());
  }

  private static ProcessCluster startWith(Path dir, List<String> options) throws Exception {
    ProcessCluster cluster = new ProcessCluster(dir.toAbsolutePath());
    List<String> arguments = new ArrayList<>(List.of("start", "--dir", cluster.dir.toString()));
    arguments.addAll(options);
    for (String option : List.of("--l0-size", "--watchdog-ms")) {
      int at = arguments.indexOf(option);
      if (at >= 0) {
        cluster.serverOptions.addAll(arguments.subList(at, at + 2));
      }
    }
    try {
      cluster.runTool(arguments, START_TIMEOUT);
    } catch (Exception | AssertionError e) {
      try {
        cluster.close();
      } catch (Exception | AssertionError suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    return cluster;
  }

  Path dir() {
    return dir;
  }

  /** The directory of region server {@code id}; its engine volume is {@code volume} in it. */
  Path serverDir(String id) {
    return dir.resolve("servers").resolve(id);
  }

  String zookeeper() throws IOException {
    return state().getProperty("zookeeper");
  }

  /** A TCP client of the cluster with {@code operationTimeout} (the fault tests' client). */
  KvsClient client(Duration operationTimeout) throws IOException {
    return KvsClient.builder()
        .zookeeper(zookeeper())
        .cluster("default")
        .transport(Transport.TCP)
        .operationTimeout(operationTimeout)
        .security(SecurityOptions.forClusterDirectory(dir, "client"))
        .build();
  }

  /** A client of the cluster over {@code transport}, with a generous operation timeout. */
  KvsClient client(Transport transport) throws IOException {
    return KvsClient.builder()
        .zookeeper(zookeeper())
        .cluster("default")
        .transport(transport)
        .operationTimeout(Duration.ofSeconds(30))
        .security(SecurityOptions.forClusterDirectory(dir, "client"))
        .build();
  }

  /** The live servers as registered in ZooKeeper, by id. */
  java.util.Map<String, io.kvs.core.cluster.ServerInfo> servers() throws Exception {
    try (org.apache.curator.framework.CuratorFramework curator =
        org.apache.curator.framework.CuratorFrameworkFactory.newClient(
            zookeeper(), 10_000, 5_000, new org.apache.curator.retry.RetryOneTime(200))) {
      curator.start();
      curator.blockUntilConnected(10, TimeUnit.SECONDS);
      io.kvs.core.cluster.ClusterPaths paths = new io.kvs.core.cluster.ClusterPaths("default");
      java.util.Map<String, io.kvs.core.cluster.ServerInfo> servers = new java.util.TreeMap<>();
      for (String id : curator.getChildren().forPath(paths.servers())) {
        servers.put(
            id,
            io.kvs.core.cluster.ClusterJson.decodeServer(
                curator.getData().forPath(paths.server(id))));
      }
      return servers;
    }
  }

  /** The process recorded as {@code name} ({@code server-s1}, {@code master-m1}, ...). */
  ProcessHandle process(String name) throws IOException {
    String pid = state().getProperty("pid." + name);
    if (pid == null) {
      throw new IllegalArgumentException("no process " + name + " in " + dir);
    }
    return ProcessHandle.of(Long.parseLong(pid))
        .filter(Processes::running)
        .orElseThrow(() -> new IllegalStateException(name + " (pid " + pid + ") is not running"));
  }

  /** What process {@code name} ({@code server-s1}, ...) wrote to its log so far. */
  String log(String name) throws IOException {
    return read(dir.resolve("logs").resolve(name + ".log"));
  }

  /** Stops process {@code name} as {@code LocalCluster stop} would: SIGTERM, then its exit. */
  void stopProcess(String name) throws Exception {
    ProcessHandle process = process(name);
    process.destroy();
    if (!Processes.awaitExit(process, STOP_TIMEOUT)) {
      fail(name + " did not stop within " + STOP_TIMEOUT);
    }
  }

  /**
   * Starts region server {@code id} (again, or for the first time: a server that joins), with the
   * arguments {@code LocalCluster start} gives it by default (and the {@code --l0-size} and {@code
   * --watchdog-ms} the cluster started with) and {@code options}, logging to the same file, and
   * records its new pid.
   */
  void startServer(String id, String... options) throws IOException {
    String name = "server-" + id;
    List<String> command =
        new ArrayList<>(
            List.of(
                javaCommand(),
                "-Xmx1g",
                "-cp",
                classPath(),
                REGION_SERVER,
                "--id",
                id,
                "--dir",
                serverDir(id).toString(),
                "--zookeeper",
                zookeeper(),
                "--fabric",
                "stream"));
    if (Files.exists(dir.resolve("secret"))) {
      // As LocalCluster start does: the servers and masters prove the cluster secret to each other.
      command.addAll(List.of("--secret-file", dir.resolve("secret").toString()));
    }
    command.addAll(serverOptions);
    if (Files.exists(dir.resolve("client-secret"))) {
      // ...and clients the client secret to servers.
      command.addAll(List.of("--client-secret-file", dir.resolve("client-secret").toString()));
    }
    command.addAll(List.of(options));
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(
                ProcessBuilder.Redirect.appendTo(
                    dir.resolve("logs").resolve(name + ".log").toFile()))
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
            .start();
    spawned.add(process);
    Properties state = state();
    state.setProperty("pid." + name, Long.toString(process.pid()));
    // A server new to the cluster joins the start order, which LocalCluster stop reads.
    List<String> order = new ArrayList<>(List.of(state.getProperty("order", "").split(",")));
    if (!order.contains(name)) {
      order.add(name);
      state.setProperty("order", String.join(",", order));
    }
    Path temporary = dir.resolve("cluster.properties.tmp");
    try (Writer out = Files.newBufferedWriter(temporary, StandardCharsets.UTF_8)) {
      state.store(out, "KVS local cluster");
    }
    Files.move(temporary, dir.resolve("cluster.properties"), StandardCopyOption.ATOMIC_MOVE);
  }

  /**
   * Injects a fault into process {@code name} ({@code s1}, {@code m1}, ...) as {@code ./kvs local
   * kill|pause|resume|restart} does: SIGKILL, SIGSTOP, SIGCONT, or a restart with its command line.
   */
  void inject(String action, String name) throws IOException {
    runTool(List.of(action, name, "--dir", dir.toString()), START_TIMEOUT);
  }

  /** The id of the active master: the first LeaderLatch participant in ZooKeeper. */
  Optional<String> activeMaster() throws Exception {
    try (CuratorFramework curator =
        CuratorFrameworkFactory.newClient(zookeeper(), 10_000, 5_000, new RetryOneTime(200))) {
      curator.start();
      if (!curator.blockUntilConnected(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("cannot reach ZooKeeper at " + zookeeper());
      }
      String masters = new ClusterPaths("default").masters();
      List<String> participants = new ArrayList<>(curator.getChildren().forPath(masters));
      participants.sort(Comparator.comparing(child -> child.substring(child.lastIndexOf('-') + 1)));
      for (String participant : participants) {
        try {
          byte[] id = curator.getData().forPath(masters + "/" + participant);
          return Optional.of(new String(id, StandardCharsets.UTF_8));
        } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
          // gone meanwhile: the next one leads
        }
      }
      return Optional.empty();
    }
  }

  /** {@link #regionMap()} for a condition that may not throw checked exceptions. */
  RegionMap mapNow() {
    try {
      return regionMap();
    } catch (Exception e) {
      throw new IllegalStateException("cannot read the region map", e);
    }
  }

  /**
   * What {@code ./kvs admin <args>} printed against this cluster (its ZooKeeper and secret given;
   * {@code args} may start with more flags, such as {@code --wait}); it must succeed.
   */
  String admin(String... args) throws Exception {
    List<String> all =
        new ArrayList<>(
            List.of("--zookeeper", zookeeper(), "--secret-file", dir.resolve("secret").toString()));
    all.addAll(List.of(args));
    java.io.StringWriter out = new java.io.StringWriter();
    java.io.StringWriter err = new java.io.StringWriter();
    int status =
        io.kvs.tools.admin.AdminMain.run(
            all.toArray(String[]::new), new java.io.PrintWriter(out), new java.io.PrintWriter(err));
    if (status != 0) {
      fail("./kvs admin " + String.join(" ", args) + " failed (" + status + "): " + err);
    }
    return out.toString();
  }

  /** The region map as ZooKeeper holds it now (not a client's cached copy). */
  RegionMap regionMap() throws Exception {
    try (CuratorFramework curator =
        CuratorFrameworkFactory.newClient(zookeeper(), 10_000, 5_000, new RetryOneTime(200))) {
      curator.start();
      if (!curator.blockUntilConnected(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("cannot reach ZooKeeper at " + zookeeper());
      }
      return readMap(curator);
    }
  }

  /**
   * The region map of cluster {@code default} through {@code curator}, every region read at once; a
   * region split or merged meanwhile is skipped (its successors show on the next read).
   */
  static RegionMap readMap(CuratorFramework curator) throws Exception {
    ClusterPaths paths = new ClusterPaths("default");
    if (curator.checkExists().forPath(paths.regions()) == null) {
      return RegionMap.empty();
    }
    List<RegionDescriptor> regions = new ArrayList<>();
    ZooKeeperReads.readAll(
        curator,
        paths.regions(),
        curator.getChildren().forPath(paths.regions()),
        (data, stat) -> regions.add(ClusterJson.decodeRegion(data)));
    return RegionMap.of(regions);
  }

  /** Stops every process of the cluster ({@code LocalCluster stop}); idempotent. */
  @Override
  public void close() throws IOException {
    if (stopped) {
      return;
    }
    List<String> left = new ArrayList<>();
    Path output = dir.resolve("launcher.log");
    long before = Files.exists(output) ? Files.size(output) : 0;
    String hung;
    try {
      runTool(List.of("stop", "--dir", dir.toString()), STOP_TIMEOUT);
      hung =
          read(output)
              .substring((int) before)
              .lines()
              .filter(line -> line.contains(" did not stop within "))
              .collect(Collectors.joining("\n"));
    } finally {
      stopped = true;
      // Never leave a process behind, even if the tool missed one (or the directory with its
      // pids is gone): and say so.
      ProcessHandle.allProcesses()
          .filter(Processes::running)
          .filter(this::ours)
          .forEach(
              process -> {
                left.add("pid " + process.pid());
                process.destroyForcibly();
              });
      for (Process process : spawned) {
        process.destroyForcibly();
      }
    }
    if (!left.isEmpty()) {
      fail("LocalCluster stop left " + left + " running (killed now)");
    }
    if (!hung.isEmpty()) {
      fail("a process did not stop on SIGTERM:\n" + hung + "\n" + threadDumps());
    }
  }

  /** The threads' stacks the processes that did not stop printed into their logs (SIGQUIT). */
  private String threadDumps() throws IOException {
    StringBuilder dumps = new StringBuilder();
    Path logs = dir.resolve("logs");
    if (!Files.isDirectory(logs)) {
      return "";
    }
    try (Stream<Path> files = Files.list(logs)) {
      for (Path log : files.sorted().toList()) {
        String text = read(log);
        int dump = text.lastIndexOf("Full thread dump");
        if (dump >= 0) {
          dumps.append(log).append(":\n").append(text, dump, text.length()).append('\n');
        }
      }
    }
    return dumps.toString();
  }

  /** Whether {@code process} runs with this cluster's directory in its arguments. */
  private boolean ours(ProcessHandle process) {
    try {
      byte[] commandLine =
          Files.readAllBytes(Path.of("/proc", Long.toString(process.pid()), "cmdline"));
      String arguments = new String(commandLine, StandardCharsets.UTF_8);
      return arguments.contains(dir + "/") || arguments.contains(dir + "\0");
    } catch (IOException e) {
      return false; // gone meanwhile
    }
  }

  /** Waits until every region of {@code client}'s map is open (and there are {@code regions}). */
  static void awaitAllOpen(KvsClient client, int regions, Duration timeout) {
    awaitCondition(
        "all " + regions + " regions open; map: " + client.regionMap().regions(),
        timeout,
        () ->
            client.regionMap().size() == regions
                && client.regionMap().regions().stream()
                    .allMatch(region -> region.state() == RegionState.OPEN));
  }

  /**
   * Waits until every region is OPEN with {@code members} members, none of them joining (the group
   * back at full strength, every backup in sync).
   */
  static void awaitFullStrength(KvsClient client, int regions, int members, Duration timeout) {
    awaitFullStrengthAfter(client, RegionMap.empty(), regions, members, timeout);
  }

  /**
   * {@link #awaitFullStrength} past a fault: every region also at an epoch above the one it had in
   * {@code before} (the client's map lags, and still shows the state before the fault for a while).
   */
  static void awaitFullStrengthAfter(
      KvsClient client, RegionMap before, int regions, int members, Duration timeout) {
    awaitCondition(
        "all "
            + regions
            + " regions open with "
            + members
            + " members in sync; map: "
            + client.regionMap().regions(),
        timeout,
        () ->
            client.regionMap().size() == regions
                && client.regionMap().regions().stream()
                    .allMatch(
                        region ->
                            region.state() == RegionState.OPEN
                                && region.members().size() == members
                                && region.joining().isEmpty()
                                && region.epoch()
                                    > before.byId(region.id()).map(r -> r.epoch()).orElse(0L)));
  }

  /** Waits until every region is OPEN without {@code gone} in its group (moved on without it). */
  static void awaitMovedOn(KvsClient client, String gone, Duration timeout) {
    awaitCondition(
        "every region open without " + gone + "; map: " + client.regionMap().regions(),
        timeout,
        () ->
            client.regionMap().regions().stream()
                .allMatch(
                    region ->
                        region.state() == RegionState.OPEN && !region.members().contains(gone)));
  }

  /** Whether every region with {@code server} in its group is in {@code state}. */
  static boolean regionsOf(KvsClient client, String server, RegionState state) {
    List<RegionDescriptor> held =
        client.regionMap().regions().stream()
            .filter(region -> region.members().contains(server))
            .toList();
    return !held.isEmpty() && held.stream().allMatch(region -> region.state() == state);
  }

  /** Polls {@code condition} until it holds; fails the test after {@code timeout}. */
  /** The servers leading an open region of {@code map} that holds at least one key. */
  static java.util.Set<String> leadersOfData(RegionMap map, KvsClient client) {
    java.util.Set<String> leaders = new java.util.TreeSet<>();
    for (RegionDescriptor region : map.regions()) {
      if (region.state() != RegionState.OPEN || region.primary().isEmpty()) {
        continue;
      }
      try {
        if (!client.scan(region.start(), region.end(), 1).isEmpty()) {
          leaders.add(region.primary());
        }
      } catch (RuntimeException e) {
        // moving or splitting right now: asked again on the next look
      }
    }
    return leaders;
  }

  /** Waits until one open region covers exactly {@code [start, end)}; returns it. */
  RegionDescriptor awaitOneRegion(byte[] start, byte[] end, Duration timeout, String what) {
    awaitCondition(
        what,
        timeout,
        () -> {
          List<RegionDescriptor> covering = mapNow().within(start, end);
          return covering.size() == 1
              && covering.get(0).state() == RegionState.OPEN
              && java.util.Arrays.equals(covering.get(0).start(), start)
              && java.util.Arrays.equals(covering.get(0).end(), end);
        });
    return mapNow().within(start, end).get(0);
  }

  /** The active master's id, waiting for the election to have one. */
  String awaitActiveMaster(Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      var active = activeMaster();
      if (active.isPresent()) {
        return active.get();
      }
      Thread.sleep(100); // polling ZooKeeper for the election's outcome
    }
    throw new AssertionError("no active master within " + timeout);
  }

  static void awaitCondition(String what, Duration timeout, BooleanSupplier condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("not within " + timeout + ": " + what);
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
    }
  }

  private Properties state() throws IOException {
    Properties state = new Properties();
    try (Reader in =
        Files.newBufferedReader(dir.resolve("cluster.properties"), StandardCharsets.UTF_8)) {
      state.load(in);
    }
    return state;
  }

  /** One region's line of {@code LocalCluster verify}. */
  record Verified(
      long region, boolean same, long pairs, List<Long> inLevels, List<Long> pastLevels) {}

  private static final Pattern VERIFIED =
      Pattern.compile(
          "^(\\d+)\\s+\\S+\\s+\\S*\\s+(same|DIFFER)\\s+(\\d+)\\s+(\\S+)\\s+(\\S+)\\s+.*$");

  /**
   * Runs {@code LocalCluster verify} over this cluster and returns what it printed; fails the test
   * if it finds a region whose backups would not serve what its primary serves, or a region where
   * some member's device levels hold no pair (then the comparison covered only what was in memory
   * and in the logs: write more, with a small L0, see {@link #SMALL_L0}).
   */
  String verify() throws IOException {
    Path output = dir.resolve("launcher.log");
    long before = Files.exists(output) ? Files.size(output) : 0;
    runTool(List.of("verify", "--dir", dir.toString()), START_TIMEOUT);
    String report = read(output).substring((int) before);
    List<Verified> regions = parseVerify(report);
    System.out.println("LocalCluster verify in " + dir + ":");
    report.lines().filter(line -> VERIFIED.matcher(line).matches()).forEach(System.out::println);
    if (regions.isEmpty()) {
      fail("LocalCluster verify listed no region:\n" + report);
    }
    for (Verified region : regions) {
      if (!region.same() || region.inLevels().stream().anyMatch(pairs -> pairs <= 0)) {
        fail(
            "region "
                + region.region()
                + " was not compared in the device levels of every member (pairs in levels,"
                + " primary first: "
                + region.inLevels()
                + "):\n"
                + report);
      }
    }
    return report;
  }

  /** The region lines of a {@code LocalCluster verify} report. */
  static List<Verified> parseVerify(String report) {
    List<Verified> regions = new ArrayList<>();
    for (String line : report.lines().toList()) {
      Matcher matcher = VERIFIED.matcher(line);
      if (matcher.matches()) {
        regions.add(
            new Verified(
                Long.parseLong(matcher.group(1)),
                matcher.group(2).equals("same"),
                Long.parseLong(matcher.group(3)),
                counts(matcher.group(4)),
                counts(matcher.group(5))));
      }
    }
    return regions;
  }

  private static List<Long> counts(String joined) {
    return joined.equals("-")
        ? List.of()
        : java.util.Arrays.stream(joined.split("/")).map(Long::parseLong).toList();
  }

  /**
   * Runs {@code LocalCluster status} and returns what it printed; fails unless every region is
   * served.
   */
  String status() throws IOException {
    Path output = dir.resolve("launcher.log");
    long before = Files.exists(output) ? Files.size(output) : 0;
    runTool(List.of("status", "--dir", dir.toString()), START_TIMEOUT);
    return read(output).substring((int) before);
  }

  private void runTool(List<String> arguments, Duration timeout) throws IOException {
    Files.createDirectories(dir);
    Path output = dir.resolve("launcher.log");
    List<String> command =
        new ArrayList<>(List.of(javaCommand(), "-cp", classPath(), LOCAL_CLUSTER));
    command.addAll(arguments);
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(output.toFile()))
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
            .start();
    boolean exited;
    try {
      exited = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException(
          "interrupted while running LocalCluster " + arguments);
    }
    if (!exited) {
      process.destroyForcibly();
      fail(
          "LocalCluster " + arguments + " did not finish within " + timeout + ":\n" + read(output));
    }
    if (process.exitValue() != 0) {
      fail(
          "LocalCluster "
              + arguments
              + " failed with status "
              + process.exitValue()
              + ":\n"
              + read(output)
              + "\n(logs in "
              + dir.resolve("logs")
              + ")");
    }
  }

  private static String read(Path file) throws IOException {
    return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
  }

  /**
   * This JVM's class path (which holds kvs-master, kvs-server and their dependencies) through a
   * {@link ClassPathJar}: the test class path is longer than the 4 KiB of command line by which
   * {@code LocalCluster stop} recognises its processes.
   */
  private String classPath() throws IOException {
    Path jar = dir.resolve("classpath.jar");
    if (!Files.exists(jar)) {
      ClassPathJar.write(jar, System.getProperty("java.class.path"));
    }
    return jar.toString();
  }

  private static String javaCommand() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }
}
