package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.client.KvsClient;
import io.kvs.client.Transport;
import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.security.ClusterSecret;
import io.kvs.core.security.SecurityOptions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster across simulated hosts (issue 28 item 6): each of three region servers in a network
 * namespace of its own, YCSB's client in a fourth, ZooKeeper and the master in the root namespace,
 * all joined by veth pairs on one bridge ({@link NamespaceHosts}); the servers replicate over the
 * native TCP transport ({@code --fabric tcp}) and every process reaches the others by its subnet
 * address only. With every elastic default (one region, split sizes stepping up from 2 MiB, the
 * balancer on) but the balancer's interval (3 s, not 10 s: {@link FirstLoadSpreadsIT} waits for the
 * default one), YCSB loading workload A from its namespace splits the region and spreads it: every
 * server ends up leading a region that holds records; then YCSB runs workload A with every read
 * verified against what the load wrote, and every operation returns OK.
 */
class MultiHostIT {
  private static final int SERVERS = 3;
  private static final int CLIENT_HOST = SERVERS + 1;
  private static final Duration SPREAD = Duration.ofMinutes(4);
  private static final Duration START = Duration.ofMinutes(2);

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  static Path dir;

  private final List<Process> processes = new ArrayList<>();

  @Test
  void aClusterOverNamespacesSplitsAndSpreadsAYcsbLoadFromAnotherHost() throws Exception {
    assertThat(NamespaceHosts.unavailableBecause()).as("network namespaces").isNull();
    String subnet = "10.88." + ThreadLocalRandom.current().nextInt(1, 250);
    try (NamespaceHosts hosts = NamespaceHosts.create(subnet, CLIENT_HOST)) {
      try {
        run(hosts);
      } finally {
        for (Process process : processes) {
          process.destroy();
        }
        for (Process process : processes) {
          if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
          }
        }
      }
    }
  }

  private void run(NamespaceHosts hosts) throws Exception {
    Path secret = dir.resolve("secret");
    Path clientSecret = dir.resolve("client-secret");
    ClusterSecret.generate(secret);
    ClusterSecret.generate(clientSecret);
    Path zookeeperDir = dir.resolve("zookeeper");
    start(
        "zookeeper",
        java(
            "io.kvs.master.ZooKeeperMain",
            "--dir",
            zookeeperDir.toString(),
            "--host",
            hosts.rootAddress()));
    Path connectFile = zookeeperDir.resolve("zookeeper.connect");
    ProcessCluster.awaitCondition(
        "ZooKeeper's connect string", START, () -> Files.exists(connectFile));
    String zookeeper = Files.readString(connectFile).trim();
    assertThat(zookeeper).startsWith(hosts.rootAddress() + ":");
    start(
        "master-m1",
        java(
            "io.kvs.master.MasterMain",
            "--id",
            "m1",
            "--dir",
            dir.resolve("m1").toString(),
            "--zookeeper",
            zookeeper,
            "--host",
            hosts.rootAddress(),
            "--servers",
            Integer.toString(SERVERS),
            "--replication",
            "2",
            "--balance-interval-ms",
            "3000",
            "--secret-file",
            secret.toString()));
    for (int i = 1; i <= SERVERS; i++) {
      start(
          "server-s" + i,
          hosts.inHost(
              i,
              java(
                  "io.kvs.server.RegionServerMain",
                  "--id",
                  "s" + i,
                  "--dir",
                  dir.resolve("s" + i).toString(),
                  "--zookeeper",
                  zookeeper,
                  "--host",
                  hosts.address(i),
                  "--fabric",
                  "tcp",
                  "--secret-file",
                  secret.toString(),
                  "--client-secret-file",
                  clientSecret.toString())));
    }
    // What YCSB's binding reads, as from ./kvs local start's directory: the connect string and the
    // client secret (not the cluster's).
    Path clientDir = Files.createDirectories(dir.resolve("client"));
    Files.writeString(
        clientDir.resolve("cluster.properties"),
        "zookeeper=" + zookeeper + "\ncluster=default\n",
        StandardCharsets.UTF_8);
    Files.copy(clientSecret, clientDir.resolve("client-secret"));

    try (CuratorFramework curator =
            CuratorFrameworkFactory.newClient(zookeeper, 10_000, 5_000, new RetryOneTime(200));
        KvsClient client =
            KvsClient.builder()
                .zookeeper(zookeeper)
                .cluster("default")
                .transport(Transport.TCP)
                .operationTimeout(Duration.ofSeconds(20))
                .security(SecurityOptions.forClusterDirectory(clientDir, "client"))
                .build()) {
      curator.start();
      ProcessCluster.awaitCondition(
          "the cluster's one region open on the servers' hosts",
          START,
          () -> {
            RegionMap map = map(curator);
            return map.size() == 1 && map.regions().get(0).state() == RegionState.OPEN;
          });
      RegionDescriptor first = map(curator).regions().get(0);
      ClusterPaths paths = new ClusterPaths("default");
      for (int i = 1; i <= SERVERS; i++) {
        assertThat(
                ClusterJson.decodeServer(curator.getData().forPath(paths.server("s" + i))).host())
            .as("server s%d registered by its host's address", i)
            .isEqualTo(hosts.address(i));
      }

      String load = ycsb(hosts, "-load", clientDir);
      assertThat(load).contains("[INSERT], Return=OK, 10000");
      long loaded = System.nanoTime();
      ProcessCluster.awaitCondition(
          "every server leading a region that holds records",
          SPREAD,
          () -> ProcessCluster.leadersOfData(map(curator), client).size() == SERVERS);
      RegionMap map = map(curator);
      assertThat(map.isComplete()).as("the key space covered: %s", map.regions()).isTrue();
      assertThat(map.size()).isGreaterThan(1);
      long spread = (System.nanoTime() - loaded) / 1_000_000;

      String verified = ycsb(hosts, "-t", clientDir);
      List<String> bad =
          verified
              .lines()
              .filter(line -> line.matches("^\\[[A-Z-]+\\], Return=.*"))
              .filter(line -> !line.contains(", Return=OK,"))
              .toList();
      assertThat(bad).as("YCSB operations or verifications not OK:\n%s", verified).isEmpty();
      assertThat(verified).contains("[VERIFY], Return=OK");
      System.out.printf(
          "MultiHostIT: region %d split into %d regions over %s, every server leading data %d ms"
              + " after a YCSB load from %s; YCSB run verified: %s%n",
          first.id(),
          map.size(),
          List.of(hosts.address(1), hosts.address(2), hosts.address(3)),
          spread,
          hosts.address(CLIENT_HOST),
          verified.lines().filter(l -> l.startsWith("[VERIFY]")).toList());
    }
  }

  /** {@code java -cp <this test's class path> main args...}. */
  private static List<String> java(String main, String... args) {
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m",
                "-Dkvs.log.level=INFO",
                "-cp",
                System.getProperty("java.class.path"),
                main));
    command.addAll(List.of(args));
    return command;
  }

  private void start(String name, List<String> command) throws Exception {
    Path logs = Files.createDirectories(dir.resolve("logs"));
    processes.add(
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(logs.resolve(name + ".log").toFile())
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
            .start());
  }

  /** Runs YCSB's client on workload A in the client's host ({@code phase}: -load or -t). */
  private String ycsb(NamespaceHosts hosts, String phase, Path clientDir) throws Exception {
    Path output = dir.resolve("ycsb" + phase + ".txt");
    List<String> command =
        hosts.inHost(
            CLIENT_HOST,
            java(
                "site.ycsb.Client",
                phase,
                "-s",
                "-db",
                "io.kvs.bench.ycsb.KvsYcsbClient",
                "-P",
                Path.of("src/main/resources/ycsb/workloada").toAbsolutePath().toString(),
                "-p",
                "dataintegrity=true",
                "-p",
                "kvs.local.dir=" + clientDir));
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
            .start();
    if (!process.waitFor(5, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      throw new AssertionError("YCSB " + phase + " did not end within 5 minutes");
    }
    String printed = Files.readString(output, StandardCharsets.UTF_8);
    assertThat(process.exitValue()).as("YCSB's exit:\n%s", printed).isZero();
    return printed;
  }

  private static RegionMap map(CuratorFramework curator) {
    try {
      return ProcessCluster.readMap(curator);
    } catch (Exception e) {
      throw new IllegalStateException("cannot read the region map", e);
    }
  }
}
