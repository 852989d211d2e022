package io.kvs.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClusterJsonTest {
  private static byte[] json(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void metadataRoundTrips() {
    RegionDescriptor region =
        new RegionDescriptor(
            7,
            new byte[] {0, (byte) 0xff},
            new byte[] {1},
            "s1",
            List.of("s2", "s3"),
            4,
            RegionState.OFFLINE);
    assertThat(ClusterJson.decodeRegion(ClusterJson.encode(region))).isEqualTo(region);
    ServerInfo server = new ServerInfo("s1", "10.0.0.1", 7001, 7002, "tcp", 7003);
    assertThat(ClusterJson.decodeServer(ClusterJson.encode(server))).isEqualTo(server);
    ClusterConfig config =
        new ClusterConfig(
            3, 2, ReplicationMode.BUILD_INDEX, List.of(new byte[] {5}, new byte[] {9}));
    ClusterConfig decoded = ClusterJson.decodeConfig(ClusterJson.encode(config));
    assertThat(decoded.regions()).isEqualTo(3);
    assertThat(decoded.mode()).isEqualTo(ReplicationMode.BUILD_INDEX);
    assertThat(decoded.splitPoints()).containsExactly(new byte[] {5}, new byte[] {9});
    MasterAddress master = new MasterAddress("m1", "10.0.0.2", 8080);
    assertThat(ClusterJson.decodeMasterAddress(ClusterJson.encode(master))).isEqualTo(master);
    assertThat(master.url("/status")).isEqualTo("http://10.0.0.2:8080/status");
    assertThat(MasterAddress.url("::1", 9, "/metrics")).isEqualTo("http://[::1]:9/metrics");
  }

  @Test
  void malformedMetadataIsAClearError() {
    assertThatThrownBy(() -> ClusterJson.decodeRegion(json("not json")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("malformed JSON");
    assertThatThrownBy(() -> ClusterJson.decodeRegion(json("[1]")))
        .hasMessageContaining("not a JSON object");
    assertThatThrownBy(() -> ClusterJson.decodeServer(json("{\"id\":\"s1\"}")))
        .hasMessageContaining("missing field host");
    assertThatThrownBy(
            () ->
                ClusterJson.decodeServer(
                    json(
                        "{\"id\":\"s1\",\"host\":\"h\",\"tcpPort\":\"x\",\"fabricPort\":0,"
                            + "\"fabricProvider\":\"\",\"controlPort\":0}")))
        .hasMessageContaining("tcpPort is not an int");
    assertThatThrownBy(
            () ->
                ClusterJson.decodeRegion(
                    json(
                        "{\"id\":1,\"start\":\"%%\",\"end\":\"\",\"primary\":\"\","
                            + "\"backups\":[],\"epoch\":1,\"state\":\"OPEN\"}")))
        .hasMessageContaining("base64");
    assertThatThrownBy(
            () ->
                ClusterJson.decodeMasterAddress(
                    json("{\"id\":\"m1\",\"host\":\"h\",\"httpPort\":0}")))
        .hasMessageContaining("HTTP port out of range");
  }
}
