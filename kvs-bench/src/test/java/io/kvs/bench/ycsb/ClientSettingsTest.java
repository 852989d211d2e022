package io.kvs.bench.ycsb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.client.Transport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClientSettingsTest {
  @TempDir Path directory;

  private static Properties properties(String... pairs) {
    Properties properties = new Properties();
    for (int i = 0; i < pairs.length; i += 2) {
      properties.setProperty(pairs[i], pairs[i + 1]);
    }
    return properties;
  }

  @Test
  void takesWhatIsGiven() throws Exception {
    ClientSettings settings =
        ClientSettings.from(
            properties(
                "kvs.zookeeper", "zk:2181",
                "kvs.cluster", "c1",
                "kvs.transport", "FABRIC",
                "kvs.timeout.ms", "2500"));
    assertThat(settings)
        .isEqualTo(new ClientSettings("zk:2181", "c1", Transport.FABRIC, Duration.ofMillis(2500)));
  }

  @Test
  void defaultsToTheLocalClusterInItsDirectory() throws Exception {
    Files.writeString(
        directory.resolve("cluster.properties"), "zookeeper=127.0.0.1\\:4242\ncluster=local\n");
    ClientSettings settings =
        ClientSettings.from(properties("kvs.local.dir", directory.toString()));
    assertThat(settings)
        .isEqualTo(
            new ClientSettings("127.0.0.1:4242", "local", Transport.TCP, Duration.ofSeconds(10)));
    assertThat(
            ClientSettings.from(
                properties("kvs.local.dir", directory.toString(), "kvs.cluster", "other")))
        .extracting(ClientSettings::cluster)
        .isEqualTo("other");
  }

  @Test
  void explainsWhatIsMissingOrWrong() {
    assertThatThrownBy(() -> ClientSettings.from(properties("kvs.local.dir", directory.toString())))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("./kvs local start");
    assertThatThrownBy(
            () -> ClientSettings.from(properties("kvs.zookeeper", "zk", "kvs.transport", "udp")))
        .hasMessageContaining("kvs.transport must be tcp or fabric");
    assertThatThrownBy(
            () -> ClientSettings.from(properties("kvs.zookeeper", "zk", "kvs.timeout.ms", "0")))
        .hasMessageContaining("kvs.timeout.ms");
  }
}
