package io.kvs.bench.scale;

import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.MasterAddress;
import io.kvs.master.MasterMain;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/**
 * The real master ({@link MasterMain}) as a process of its own against the simulation's ZooKeeper,
 * so that its heap and resident memory are its own, and a profile ({@code jcmd Thread.print}) shows
 * its threads alone. Read through its operator HTTP port: its pass timer from {@code /metrics}, its
 * status page.
 */
final class MasterProcess implements AutoCloseable {
  /** The master's heap bound, as {@code ./kvs local start} gives it ({@code LocalStart}) twice. */
  static final String HEAP = "1g";

  private static final Pattern PASS_COUNT =
      Pattern.compile("(?m)^kvs_master_passes_seconds_count\\{[^}]*\\} ([0-9.eE+-]+)");
  private static final Pattern PASS_SUM =
      Pattern.compile("(?m)^kvs_master_passes_seconds_sum\\{[^}]*\\} ([0-9.eE+-]+)");

  private final Process process;
  private final Path log;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private volatile String base;

  private MasterProcess(Process process, Path log) {
    this.process = process;
    this.log = log;
  }

  /**
   * Starts master {@code m1} of {@code cluster} in {@code directory} (its log {@code master.log}
   * there) with ZooKeeper at {@code zookeeper} and {@code arguments} after those.
   */
  static MasterProcess start(
      Path directory, String zookeeper, String cluster, List<String> arguments) throws IOException {
    Files.createDirectories(directory);
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx" + HEAP);
    command.add("-Dkvs.log.level=INFO");
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(MasterMain.class.getName());
    command.addAll(
        List.of(
            "--id",
            "m1",
            "--dir",
            directory.toString(),
            "--zookeeper",
            zookeeper,
            "--cluster",
            cluster));
    command.addAll(arguments);
    Path log = directory.resolve("master.log");
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
            .start();
    return new MasterProcess(process, log);
  }

  long pid() {
    return process.pid();
  }

  Path log() {
    return log;
  }

  /** Waits until the master published its status page's address (read from ZooKeeper). */
  void awaitHttp(CuratorFramework curator, String cluster, Duration bound) throws Exception {
    String path = new ClusterPaths(cluster).masterHttp("m1");
    long deadline = System.nanoTime() + bound.toNanos();
    while (true) {
      if (!process.isAlive()) {
        throw new IllegalStateException("the master exited; see " + log);
      }
      try {
        MasterAddress address = ClusterJson.decodeMasterAddress(curator.getData().forPath(path));
        base = "http://" + address.host() + ":" + address.httpPort();
        return;
      } catch (KeeperException.NoNodeException e) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("the master published no address within " + bound);
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
      }
    }
  }

  /** GETs {@code path} of its HTTP port; the body. */
  String get(String path, Duration bound) throws IOException, InterruptedException {
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create(base + path)).timeout(bound).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IOException("GET " + path + ": " + response.statusCode());
    }
    return response.body();
  }

  /** Its passes so far and their total seconds, from {@code /metrics}. */
  double[] passes() throws IOException, InterruptedException {
    String metrics = get("/metrics", Duration.ofSeconds(5));
    return new double[] {number(PASS_COUNT, metrics), number(PASS_SUM, metrics)};
  }

  private static double number(Pattern pattern, String text) {
    Matcher matcher = pattern.matcher(text);
    return matcher.find() ? Double.parseDouble(matcher.group(1)) : 0;
  }

  /**
   * Its heap in use right after a full collection ({@code jcmd GC.run}, then {@code GC.heap_info}),
   * in bytes: what its structures hold.
   */
  long heapAfterGc() throws IOException, InterruptedException {
    jcmd("GC.run");
    String info = jcmd("GC.heap_info");
    Matcher matcher = Pattern.compile("used (\\d+)K").matcher(info);
    if (!matcher.find()) {
      throw new IOException("no heap use in: " + info);
    }
    return Long.parseLong(matcher.group(1)) * 1024;
  }

  /** Its resident set (bytes), from {@code /proc}. */
  long residentBytes() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid()), "status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
      }
    }
    return 0;
  }

  /** Runs {@code jcmd <pid> command}; its output. */
  String jcmd(String command) throws IOException, InterruptedException {
    Process jcmd =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(pid()),
                command)
            .redirectErrorStream(true)
            .start();
    String output = new String(jcmd.getInputStream().readAllBytes());
    if (!jcmd.waitFor(60, TimeUnit.SECONDS)) {
      jcmd.destroyForcibly();
    }
    return output;
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor();
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
