package io.kvs.master.status;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.MasterAddress;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.HeldRegion;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class StatusReportTest {
  @Test
  void reportsTheClusterAsServersHoldIt() {
    RegionDescriptor first =
        new RegionDescriptor(
            1, new byte[0], new byte[] {'<', 0}, "s1", List.of("s2"), 11, RegionState.OPEN);
    RegionDescriptor second =
        new RegionDescriptor(
            2,
            new byte[] {'<', 0},
            new byte[0],
            "s2",
            List.of("s1"),
            List.of("s1"),
            3,
            RegionState.OPEN);
    Map<String, ServerInfo> servers = new TreeMap<>();
    servers.put("s1", new ServerInfo("s1", "127.0.0.1", 7001, 0, "", 7003, 7004));
    servers.put("s2", new ServerInfo("s2", "127.0.0.1", 7011, 0, "", 7013, 0));
    // s1 closed region 1 (the stranger); s2 holds both as the map says.
    Map<String, ServerProbe.Probe> probes =
        Map.of(
            "s1",
            new ServerProbe.Probe(
                "s1",
                5,
                Map.of(2L, new HeldRegion(2, 3, RegionRole.BACKUP)),
                Map.of("primary.puts", 9L),
                ""),
            "s2",
            new ServerProbe.Probe(
                "s2",
                5,
                Map.of(
                    1L, new HeldRegion(1, 11, RegionRole.BACKUP),
                    2L, new HeldRegion(2, 3, RegionRole.PRIMARY)),
                Map.of(),
                ""));
    Recovery recovery =
        new Recovery(2, List.of("re-replicated: s1 joins"), 0, 1_000, 0, Recovery.IN_PROGRESS);
    ClusterSnapshot snapshot =
        new ClusterSnapshot(
            "default",
            Optional.of(new ClusterConfig(2, 2, ReplicationMode.SEND_INDEX, List.of(), 1)),
            List.of(first, second),
            servers,
            probes,
            "m2",
            false,
            "m1",
            false,
            List.of(
                new MasterAddress("m1", "10.0.0.1", 8080),
                new MasterAddress("m2", "10.0.0.2", 8081)),
            List.of(recovery),
            Set.of("s1"),
            4_000);

    JsonNode report = StatusReport.of(snapshot);
    assertThat(report.path("servers"))
        .anySatisfy(
            server -> {
              assertThat(server.path("id").asText()).isEqualTo("s1");
              assertThat(server.path("decommissioned").asBoolean()).isTrue();
            });

    assertThat(report.path("master").path("active").asBoolean()).isFalse();
    assertThat(report.path("master").path("activeStatusUrl").asText())
        .isEqualTo("http://10.0.0.1:8080/status");
    assertThat(report.path("cluster").path("config").path("mode").asText()).isEqualTo("send-index");
    JsonNode summary = report.path("summary");
    assertThat(summary.path("regions").asInt()).isEqualTo(2);
    assertThat(summary.path("byState").path("OPEN").asInt()).isEqualTo(2);
    assertThat(summary.path("byHealth").path("not-served").asInt()).isEqualTo(1);
    assertThat(summary.path("byHealth").path("under-replicated").asInt()).isEqualTo(1);
    JsonNode region1 = report.path("regions").get(0);
    assertThat(region1.path("end").asText()).isEqualTo("<\\x00");
    assertThat(region1.path("endBase64").asText()).isEqualTo("PAA=");
    assertThat(region1.path("health").asText()).isEqualTo("not-served");
    assertThat(region1.path("notHeldBy").get(0).asText()).isEqualTo("s1");
    assertThat(report.path("underReplicated").get(0).asLong()).isEqualTo(2);
    assertThat(report.path("recovering").get(0).asLong()).isEqualTo(2);
    JsonNode s1 = report.path("servers").get(0);
    assertThat(s1.path("metricsUrl").asText()).isEqualTo("http://127.0.0.1:7004/metrics");
    assertThat(s1.path("primaryOf").asInt()).isEqualTo(1);
    assertThat(s1.path("joiningOf").asInt()).isEqualTo(1);
    assertThat(s1.path("stats").path("primary.puts").asLong()).isEqualTo(9);
    assertThat(report.path("servers").get(1).path("metricsUrl").asText()).isEmpty();
    JsonNode running = report.path("recoveries").get(0);
    assertThat(running.path("durationMs").asLong()).isEqualTo(3_000);
    assertThat(running.path("outcome").asText()).isEqualTo("in progress");
  }
}
