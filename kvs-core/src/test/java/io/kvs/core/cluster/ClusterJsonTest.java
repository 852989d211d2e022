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
  void splitsRoundTripAndPlaceTheirDaughters() {
    RegionDescriptor parent =
        new RegionDescriptor(
            7, new byte[] {1}, new byte[] {9}, "s1", List.of("s2"), 4, RegionState.OPEN);
    List<RegionDescriptor> daughters = parent.split(new byte[] {5}, 12, true);
    RegionDescriptor lower = daughters.get(0);
    RegionDescriptor upper = daughters.get(1);
    assertThat(lower.id()).isEqualTo(12);
    assertThat(upper.id()).isEqualTo(13);
    assertThat(lower.start()).isEqualTo(new byte[] {1});
    assertThat(lower.end()).isEqualTo(new byte[] {5});
    assertThat(upper.start()).isEqualTo(new byte[] {5});
    assertThat(upper.end()).isEqualTo(new byte[] {9});
    assertThat(lower.origin()).isEqualTo(new SplitOrigin(7, 13));
    assertThat(upper.origin()).isEqualTo(new SplitOrigin(7, 12));
    assertThat(lower.splitKey()).isEqualTo(new byte[] {5});
    assertThat(upper.splitKey()).isEqualTo(new byte[] {5});
    assertThat(lower.epoch()).isEqualTo(5);
    assertThat(lower.state()).isEqualTo(RegionState.OPENING);
    assertThat(lower.joining()).containsExactly("s2"); // send-index: re-replicated
    assertThat(parent.split(new byte[] {5}, 12, false).get(0).joining()).isEmpty();
    for (RegionDescriptor daughter : daughters) {
      assertThat(ClusterJson.decodeRegion(ClusterJson.encode(daughter))).isEqualTo(daughter);
      // Kept by a reassignment, forgotten once every member holds it.
      assertThat(daughter.reassigned("s2", List.of("s1")).origin()).isEqualTo(daughter.origin());
      assertThat(daughter.withState(RegionState.OPEN).origin()).isNull();
    }
    assertThat(parent.splitsAt(new byte[] {5})).isTrue();
    assertThat(parent.splitsAt(new byte[] {1})).isFalse(); // its start: the lower half empty
    assertThat(parent.splitsAt(new byte[] {9})).isFalse(); // its end: outside
    assertThat(parent.splitsAt(new byte[] {0})).isFalse();
    assertThatThrownBy(() -> parent.split(new byte[] {1}, 12, true))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> parent.split(new byte[] {9}, 12, true))
        .isInstanceOf(IllegalArgumentException.class);
    SplitRequest request = SplitRequest.at(new byte[] {3, 0});
    assertThat(ClusterJson.decodeSplit(ClusterJson.encode(request))).isEqualTo(request);
    SplitRequest refused = request.refusedFor("no region 7");
    assertThat(ClusterJson.decodeSplit(ClusterJson.encode(refused))).isEqualTo(refused);
    assertThat(refused.isRefused()).isTrue();
    SplitRequest forLoad = SplitRequest.forLoad();
    assertThat(ClusterJson.decodeSplit(ClusterJson.encode(forLoad))).isEqualTo(forLoad);
    assertThat(forLoad.refusedFor("cold").byLoad()).isTrue();
    assertThat(ClusterJson.decodeSplit(ClusterJson.encode(request)).byLoad()).isFalse();
  }

  @Test
  void mergesRoundTripAndCoverBothRanges() {
    RegionDescriptor left =
        new RegionDescriptor(
            7, new byte[] {1}, new byte[] {5}, "s1", List.of("s2", "s3"), 4, RegionState.OPEN);
    RegionDescriptor right =
        new RegionDescriptor(
            9, new byte[] {5}, new byte[0], "s1", List.of("s3", "s2"), 6, RegionState.OPEN);
    RegionDescriptor merged = left.merge(right, 12, true);
    assertThat(merged.id()).isEqualTo(12);
    assertThat(merged.start()).isEqualTo(new byte[] {1});
    assertThat(merged.end()).isEmpty();
    assertThat(merged.epoch()).as("above both").isEqualTo(7);
    assertThat(merged.state()).isEqualTo(RegionState.OPENING);
    assertThat(merged.origin()).isEqualTo(new MergeOrigin(7, 9));
    assertThat(merged.splitKey()).isNull();
    assertThat(merged.joining()).containsExactly("s2", "s3"); // send-index: re-replicated
    assertThat(left.merge(right, 12, false).joining()).isEmpty();
    assertThat(ClusterJson.decodeRegion(ClusterJson.encode(merged))).isEqualTo(merged);
    assertThat(merged.withState(RegionState.OPEN).origin()).isNull();
    // Not neighbours, the wrong way round, or another group: refused.
    assertThatThrownBy(() -> right.merge(left, 12, true))
        .isInstanceOf(IllegalArgumentException.class);
    RegionDescriptor elsewhere =
        new RegionDescriptor(
            9, new byte[] {5}, new byte[0], "s2", List.of("s1", "s3"), 6, RegionState.OPEN);
    assertThatThrownBy(() -> left.merge(elsewhere, 12, true))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> left.merge(right, 9, true))
        .as("its own origin")
        .isInstanceOf(IllegalArgumentException.class);
    MergeRequest refused = MergeRequest.PENDING.refusedFor("no region 7");
    assertThat(ClusterJson.decodeMerge(ClusterJson.encode(refused))).isEqualTo(refused);
    assertThat(ClusterJson.decodeMerge(ClusterJson.encode(MergeRequest.PENDING)).isRefused())
        .isFalse();
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

  /**
   * Metadata carries its format; one without the field is format 1, one of another format is
   * refused naming both, whichever object it is.
   */
  @Test
  void metadataOfAnotherFormatIsRefusedNamingBoth() {
    String region =
        "\"id\":1,\"start\":\"\",\"end\":\"\",\"primary\":\"s1\",\"backups\":[],\"epoch\":1,"
            + "\"state\":\"OPEN\"";
    assertThat(ClusterJson.decodeRegion(json("{" + region + "}")).primary()).isEqualTo("s1");
    RegionDescriptor written =
        new RegionDescriptor(1, new byte[0], new byte[0], "s1", List.of(), 1, RegionState.OPEN);
    assertThat(new String(ClusterJson.encode(written), StandardCharsets.UTF_8))
        .contains("\"format\":" + ClusterJson.METADATA_FORMAT);
    assertThatThrownBy(() -> ClusterJson.decodeRegion(json("{\"format\":2," + region + "}")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("a region descriptor of metadata format 2")
        .hasMessageContaining("reads format 1")
        .hasMessageContaining("newer release");
    String server =
        "\"id\":\"s1\",\"host\":\"h\",\"tcpPort\":1,\"fabricPort\":2,\"fabricProvider\":\"tcp\","
            + "\"controlPort\":3";
    assertThatThrownBy(() -> ClusterJson.decodeServer(json("{\"format\":7," + server + "}")))
        .hasMessageContaining("a server registration of metadata format 7");
    ClusterConfig config = new ClusterConfig(1, 3, ReplicationMode.SEND_INDEX, List.of(), 1);
    String encoded = new String(ClusterJson.encode(config), StandardCharsets.UTF_8);
    assertThatThrownBy(
            () -> ClusterJson.decodeConfig(json(encoded.replace("\"format\":1", "\"format\":0"))))
        .hasMessageContaining("the cluster's configuration of metadata format 0")
        .hasMessageContaining("older release");
  }
}
