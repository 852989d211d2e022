package io.kvs.tools;

import io.kvs.core.cli.Processes;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A local cluster for the demo and the benchmarks: started and stopped by running {@code
 * io.kvs.tools.local.LocalCluster} as a process on this JVM's class path, in a session of its own
 * (through {@code setsid} where there is one) so that a Ctrl-C at the terminal reaches the demo,
 * which then stops the cluster in order (servers first), rather than every process at once. The
 * class path goes through a {@link ClassPathJar}, so that {@code LocalCluster stop} recognises the
 * processes however long it is. What the tool prints goes to {@code launcher.log} in the cluster
 * directory. {@link #stop()} is idempotent and also runs from a shutdown hook, so the cluster is
 * stopped however the demo ends.
 */
public final class LaunchedCluster implements AutoCloseable {
  private static final String LOCAL_CLUSTER = "io.kvs.tools.local.LocalCluster";
  private static final Duration START_TIMEOUT = Duration.ofMinutes(3);
  private static final Duration STOP_TIMEOUT = Duration.ofMinutes(4);

  private final Path dir;
  private final Path launcherLog;
  private final Thread hook;
  private final Runnable onInterrupt;
  private volatile Process starting;
  private boolean stopped;

  private LaunchedCluster(Path dir, Runnable onInterrupt) {
    this.dir = dir;
    this.onInterrupt = onInterrupt;
    this.launcherLog = dir.resolve("launcher.log");
    this.hook = new Thread(this::stopFromHook, "kvs-cluster-stop");
  }

  /**
   * Wipes {@code dir} (stopping a cluster left running there) and starts a cluster in it.
   *
   * @param options the options of {@code LocalCluster start} after {@code --dir}
   * @param onInterrupt runs first when the JVM shuts down (Ctrl-C) before the cluster was stopped
   * @throws IllegalStateException if the cluster did not start; what it printed is in the message
   */
  public static LaunchedCluster start(Path dir, List<String> options, Runnable onInterrupt)
      throws IOException, InterruptedException {
    return start(dir, options, onInterrupt, root -> {});
  }

  /** What must be in place in a cluster directory before its processes start. */
  @FunctionalInterface
  public interface Preparation {
    /** Prepares {@code root}, the emptied cluster directory. */
    void prepare(Path root) throws IOException;
  }

  /**
   * {@link #start(Path, List, Runnable)}, running {@code beforeStart} on the emptied directory
   * before any process starts (e.g. to put a server's directory on a file system of its own).
   */
  public static LaunchedCluster start(
      Path dir, List<String> options, Runnable onInterrupt, Preparation beforeStart)
      throws IOException, InterruptedException {
    Path root = dir.toAbsolutePath().normalize();
    prepare(root);
    beforeStart.prepare(root);
    LaunchedCluster cluster = new LaunchedCluster(root, onInterrupt);
    Runtime.getRuntime().addShutdownHook(cluster.hook);
    List<String> arguments = new ArrayList<>(List.of("start", "--dir", root.toString()));
    arguments.addAll(options);
    cluster.starting = cluster.launch(arguments);
    try {
      cluster.await(cluster.starting, START_TIMEOUT, "start");
    } catch (IOException | InterruptedException | RuntimeException e) {
      try {
        cluster.close();
      } catch (IOException | RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    } finally {
      cluster.starting = null;
    }
    return cluster;
  }

  /** The cluster's directory. */
  public Path dir() {
    return dir;
  }

  /** The ZooKeeper connect string and cluster name of the running cluster. */
  public String[] connect() throws IOException {
    Properties state = new Properties();
    try (Reader in = Files.newBufferedReader(dir.resolve("cluster.properties"))) {
      state.load(in);
    }
    return new String[] {state.getProperty("zookeeper"), state.getProperty("cluster", "default")};
  }

  /**
   * Runs {@code LocalCluster <action> <name> --dir ...} on this cluster: a fault ({@code kill},
   * {@code pause}, {@code resume}, {@code restart}) for benchmarks that inject them.
   */
  public void run(String action, String name) throws IOException, InterruptedException {
    await(launch(List.of(action, name, "--dir", dir.toString())), START_TIMEOUT, action);
  }

  /**
   * Kills process {@code name} (e.g. {@code server-s1}) with SIGKILL from this JVM, at once (no
   * tool to launch first, so a benchmark knows the moment), and waits until it is gone.
   */
  public void kill(String name) throws IOException, InterruptedException {
    Properties state = new Properties();
    try (Reader in = Files.newBufferedReader(dir.resolve("cluster.properties"))) {
      state.load(in);
    }
    String pid = state.getProperty("pid." + name);
    ProcessHandle process =
        pid == null
            ? null
            : ProcessHandle.of(Long.parseLong(pid)).filter(Processes::running).orElse(null);
    if (process == null) {
      throw new IllegalStateException(name + " is not running in " + dir);
    }
    process.destroyForcibly(); // SIGKILL
    if (!Processes.awaitExit(process, Duration.ofSeconds(30))) {
      throw new IllegalStateException(name + " did not die after SIGKILL");
    }
  }

  /**
   * The process recorded as {@code name} ({@code server-s1}, {@code master-m1}, {@code zookeeper}),
   * if it runs.
   */
  public Optional<ProcessHandle> process(String name) throws IOException {
    Properties state = new Properties();
    try (Reader in = Files.newBufferedReader(dir.resolve("cluster.properties"))) {
      state.load(in);
    }
    String pid = state.getProperty("pid." + name);
    return pid == null || pid.isEmpty()
        ? Optional.empty()
        : ProcessHandle.of(Long.parseLong(pid)).filter(Processes::running);
  }

  /** How a run of the {@code LocalCluster} tool ended, and what it printed. */
  public record ToolRun(int status, String output) {}

  /**
   * Runs {@code LocalCluster arguments...} on this cluster (e.g. {@code verify --dir DIR}) within
   * {@code timeout} and returns its exit status and output (also kept in {@code launcher.log}).
   *
   * @throws IllegalStateException if it does not finish within {@code timeout}
   */
  public ToolRun tool(Duration timeout, List<String> arguments)
      throws IOException, InterruptedException {
    long before = Files.exists(launcherLog) ? Files.size(launcherLog) : 0;
    Process process = launch(arguments);
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      throw new IllegalStateException(
          "LocalCluster " + arguments + " did not finish within " + timeout);
    }
    byte[] log = Files.readAllBytes(launcherLog);
    String output =
        new String(
            log,
            (int) Math.min(before, log.length),
            (int) Math.max(0, log.length - before),
            StandardCharsets.UTF_8);
    return new ToolRun(process.exitValue(), output);
  }

  /** Stops every process of the cluster (servers, masters, ZooKeeper); once. */
  public synchronized void stop() throws IOException, InterruptedException {
    if (stopped) {
      return;
    }
    Process start = starting;
    if (start != null) {
      start.destroy(); // processes it started are recorded already; stop finds them
      start.waitFor(10, TimeUnit.SECONDS);
    }
    await(launch(List.of("stop", "--dir", dir.toString())), STOP_TIMEOUT, "stop");
    stopped = true;
  }

  @Override
  public void close() throws IOException {
    try {
      stop();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("interrupted while stopping the cluster in " + dir);
    }
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // the JVM is shutting down: the hook is running or has run
    }
  }

  private void stopFromHook() {
    boolean needed;
    synchronized (this) {
      needed = !stopped;
    }
    if (needed) {
      onInterrupt.run();
      System.out.println();
      System.out.println("interrupted: stopping the demo cluster in " + dir);
    }
    try {
      stop();
    } catch (IOException | InterruptedException | RuntimeException e) {
      System.err.println("kvs demo: could not stop the cluster in " + dir + ": " + e);
    }
  }

  /**
   * Stops a cluster left running in {@code dir}, then empties it: only a directory this class (or
   * {@code LocalCluster}) made, or an empty one.
   */
  private static void prepare(Path dir) throws IOException, InterruptedException {
    if (Files.exists(dir.resolve("cluster.properties"))) {
      LaunchedCluster leftOver = new LaunchedCluster(dir, () -> {});
      leftOver.stop();
    } else if (Files.isDirectory(dir)
        && !Files.exists(dir.resolve("launcher.log"))
        && !Files.exists(dir.resolve("classpath.jar"))) {
      try (Stream<Path> entries = Files.list(dir)) {
        if (entries.findAny().isPresent()) {
          throw new IllegalStateException(
              dir + " is not empty and holds no cluster: choose another --dir");
        }
      }
    }
    Directories.deleteRecursively(dir);
    Files.createDirectories(dir);
  }

  private Process launch(List<String> arguments) throws IOException {
    Files.createDirectories(dir);
    List<String> command = new ArrayList<>();
    if (Files.isExecutable(Path.of("/usr/bin/setsid"))) {
      command.add("/usr/bin/setsid");
    }
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Dkvs.log.level=WARN");
    command.add("-cp");
    command.add(
        ClassPathJar.write(dir.resolve("classpath.jar"), System.getProperty("java.class.path"))
            .toString());
    command.add(LOCAL_CLUSTER);
    command.addAll(arguments);
    return new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(launcherLog.toFile()))
        .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
        .start();
  }

  private void await(Process process, Duration timeout, String what)
      throws IOException, InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      throw new IllegalStateException(
          "LocalCluster " + what + " did not finish within " + timeout + "; see " + launcherLog);
    }
    if (process.exitValue() != 0) {
      throw new IllegalStateException(
          "LocalCluster "
              + what
              + " failed (exit status "
              + process.exitValue()
              + "); it printed:\n"
              + tail(launcherLog, 30)
              + "\nserver, master and ZooKeeper logs are in "
              + dir.resolve("logs"));
    }
  }

  private static String tail(Path file, int lines) throws IOException {
    List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
    return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
  }
}
