package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.client.KvsClient;
import io.kvs.core.KeyValue;
import io.kvs.core.cluster.RegionMap;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a new user sees (issue 28's opening symptom): a cluster started with every default ({@code
 * ./kvs local start}: three servers, one region, replication 2, send-index), then YCSB's own client
 * loading workload A ({@code ./kvs ycsb load a}: 10,000 records of about 1 KB, keys all beginning
 * {@code usertable:user}). The master splits the one region as it grows (the first split size steps
 * up with the regions a primary leads) and spreads replicas and leadership by itself, so that each
 * of the three servers ends up leading a region holding some of the records; every record is still
 * there, and {@code LocalCluster verify} finds the backups holding what their primaries hold.
 */
class FirstLoadSpreadsIT {
  private static final int RECORDS = 10_000;
  private static final Set<String> SERVERS = Set.of("s1", "s2", "s3");
  private static final Duration SPREAD = Duration.ofMinutes(4);

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  static Path dir;

  @Test
  void aYcsbLoadOnEveryDefaultEndsWithEveryServerLeadingData() throws Exception {
    Path clusterDir = dir.resolve("cluster");
    try (ProcessCluster cluster = ProcessCluster.startWithDefaults(clusterDir);
        KvsClient client = cluster.client(Duration.ofSeconds(20))) {
      assertThat(cluster.mapNow().size()).as("one region to begin with").isEqualTo(1);
      long began = System.nanoTime();
      String summary = ycsbLoad(clusterDir);
      assertThat(summary).contains("[INSERT], Return=OK, " + RECORDS);
      long loaded = System.nanoTime();

      List<String> seen = new ArrayList<>();
      ProcessCluster.awaitCondition(
          "every server leading a region that holds records",
          SPREAD,
          () -> {
            Set<String> leaders = ProcessCluster.leadersOfData(cluster.mapNow(), client);
            String line = cluster.mapNow().size() + " regions, data led by " + leaders;
            if (seen.isEmpty() || !seen.get(seen.size() - 1).equals(line)) {
              seen.add(line);
            }
            return leaders.equals(SERVERS);
          });
      long spread = System.nanoTime();
      RegionMap map = cluster.mapNow();
      assertThat(map.isComplete()).as("the key space covered: %s", map.regions()).isTrue();
      assertThat(countAll(client)).as("every record still there").isEqualTo(RECORDS);
      ProcessCluster.awaitFullStrength(client, map.size(), 2, SPREAD);
      cluster.verify();
      System.out.printf(
          "FirstLoadSpreadsIT: load %d ms; every server leading data %d ms after the load ended,"
              + " %d regions; steps: %s%n",
          (loaded - began) / 1_000_000, (spread - loaded) / 1_000_000, map.size(), seen);
    }
  }

  /** Runs YCSB's client as {@code ./kvs ycsb load a} does; returns what it printed. */
  private static String ycsbLoad(Path clusterDir) throws Exception {
    Path output = dir.resolve("ycsb-load-a.txt");
    List<String> command =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Dkvs.log.level=WARN",
            "-cp",
            System.getProperty("java.class.path"),
            "site.ycsb.Client",
            "-load",
            "-s",
            "-db",
            "io.kvs.bench.ycsb.KvsYcsbClient",
            "-P",
            Path.of("src/main/resources/ycsb/workloada").toAbsolutePath().toString(),
            "-p",
            "kvs.local.dir=" + clusterDir);
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
            .start();
    if (!process.waitFor(5, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      throw new AssertionError("YCSB load did not end within 5 minutes");
    }
    String printed = Files.readString(output, StandardCharsets.UTF_8);
    assertThat(process.exitValue()).as("YCSB's exit:\n%s", printed).isZero();
    return printed;
  }

  /** Every pair of the cluster, counted in pages. */
  private static int countAll(KvsClient client) {
    int count = 0;
    byte[] from = new byte[0];
    while (true) {
      List<KeyValue> page = client.scan(from, new byte[0], 1000);
      count += page.size();
      if (page.size() < 1000) {
        return count;
      }
      byte[] last = page.get(page.size() - 1).key();
      from = java.util.Arrays.copyOf(last, last.length + 1); // just after the last key
    }
  }
}
