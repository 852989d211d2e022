package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.client.KvsClient;
import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.ServerInfo;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster of processes (ZooKeeper, a master, three region servers, send-index at factor 2) under
 * a little load through the client: every server's {@code GET /metrics} counts the requests it
 * answered, replication and engine series are there, and the master's counts its servers and
 * regions.
 */
class MetricsIT {
  private static final int REGIONS = 6;
  private static final int WRITES = 600;
  private static final Duration WITHIN = Duration.ofSeconds(30);

  // Kept when a test fails: the processes' logs are in it.
  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  private ProcessCluster cluster;
  private final HttpClient http = HttpClient.newHttpClient();

  @AfterEach
  void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void serversAndTheMasterServeTheirMetricsToPrometheus() throws Exception {
    cluster =
        ProcessCluster.start(
            dir, "--servers", "3", "--regions", Integer.toString(REGIONS), "--replication", "2");
    try (KvsClient client = cluster.client(Duration.ofSeconds(30))) {
      ProcessCluster.awaitFullStrength(client, REGIONS, 2, WITHIN);
      for (int i = 0; i < WRITES; i++) {
        client.put(TestKeys.key("metrics", i), ("value" + i).getBytes(StandardCharsets.UTF_8));
      }
      for (int i = 0; i < WRITES; i += 10) {
        assertThat(client.get(TestKeys.key("metrics", i))).isPresent();
      }
    }
    List<ServerInfo> servers = servers();
    assertThat(servers).hasSize(3);
    // Each server reads its native counters once a second: wait for the puts to show.
    ProcessCluster.awaitCondition(
        "the servers' scrapes count " + WRITES + " puts",
        WITHIN,
        () ->
            servers.stream().mapToDouble(s -> sum(scrape(s.httpPort()), "put", "ok")).sum()
                == WRITES);
    // Series of an operation appear once it was counted: look at a server that took puts.
    String scrape =
        servers.stream()
            .map(s -> scrape(s.httpPort()))
            .filter(text -> sum(text, "put", "ok") > 0)
            .findFirst()
            .orElseThrow();
    assertThat(scrape)
        .contains("kvs_server_request_latency_seconds_count{")
        .contains("kvs_server_request_latency_percentile_seconds{")
        .contains("kvs_server_regions{")
        .contains("kvs_replication_sent_bytes_total{")
        .contains("kvs_replication_posts_total{")
        .contains("kvs_replication_backup_regions{")
        .contains("kvs_replication_lag_seconds{")
        .contains("kvs_replication_lag_writes{")
        .contains("kvs_engine_compactions_seconds_count{")
        .contains("kvs_engine_cache_hit_ratio{")
        .contains("jvm_memory_used_bytes{");
    double sent =
        servers.stream()
            .mapToDouble(
                s ->
                    value(
                        scrape(s.httpPort()), "kvs_replication_sent_bytes_total{", "kind=\"log\""))
            .sum();
    assertThat(sent).as("log bytes replicated by the primaries").isPositive();

    Set<Integer> masterPorts = ListeningPorts.of(cluster.process("master-m1").pid());
    assertThat(masterPorts).as("the master's listening ports: its HTTP port only").hasSize(1);
    int masterPort = masterPorts.iterator().next();
    String master = scrape(masterPort);
    assertThat(master)
        .contains("kvs_master_active{master=\"m1\",process=\"master\"} 1.0")
        .contains("kvs_master_servers_live{master=\"m1\",process=\"master\"} 3.0")
        .contains(
            "kvs_master_regions{master=\"m1\",process=\"master\",state=\"open\"} " + REGIONS + ".0")
        .contains("kvs_master_passes_seconds_count{");
  }

  private List<ServerInfo> servers() throws Exception {
    try (CuratorFramework curator =
        CuratorFrameworkFactory.newClient(
            cluster.zookeeper(), 10_000, 5_000, new RetryOneTime(200))) {
      curator.start();
      curator.blockUntilConnected(10, TimeUnit.SECONDS);
      ClusterPaths paths = new ClusterPaths("default");
      return curator.getChildren().forPath(paths.servers()).stream()
          .map(
              id -> {
                try {
                  return ClusterJson.decodeServer(curator.getData().forPath(paths.server(id)));
                } catch (Exception e) {
                  throw new IllegalStateException("cannot read server " + id, e);
                }
              })
          .toList();
    }
  }

  private String scrape(int port) {
    try {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).isEqualTo(200);
      return response.body();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** {@code kvs_server_requests_total} of {@code operation} and {@code status} in a scrape. */
  private static double sum(String scrape, String operation, String status) {
    return value(
        scrape,
        "kvs_server_requests_total{",
        "operation=\"" + operation + "\"",
        "status=\"" + status + "\"");
  }

  /** The sum of the series of a scrape starting with {@code prefix} and holding every label. */
  private static double value(String scrape, String prefix, String... labels) {
    return scrape
        .lines()
        .filter(line -> line.startsWith(prefix))
        .filter(line -> List.of(labels).stream().allMatch(line::contains))
        .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
        .sum();
  }

  /** The TCP ports a process listens on, from /proc (the master listens only on its HTTP port). */
  static final class ListeningPorts {
    private ListeningPorts() {}

    static Set<Integer> of(long pid) throws IOException {
      Set<String> sockets = new HashSet<>();
      try (var fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
        for (Path fd : fds.toList()) {
          try {
            String target = Files.readSymbolicLink(fd).toString();
            if (target.startsWith("socket:[")) {
              sockets.add(target.substring(8, target.length() - 1));
            }
          } catch (IOException closedMeanwhile) {
            // not a socket any more
          }
        }
      }
      Set<Integer> ports = new HashSet<>();
      for (String table : List.of("tcp", "tcp6")) {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "net", table))) {
          String[] fields = line.trim().split("\\s+");
          // sl local_address rem_address st ... inode (field 9); st 0A is LISTEN
          if (fields.length > 9 && fields[3].equals("0A") && sockets.contains(fields[9])) {
            ports.add(Integer.parseInt(fields[1].substring(fields[1].indexOf(':') + 1), 16));
          }
        }
      }
      return ports;
    }
  }
}
