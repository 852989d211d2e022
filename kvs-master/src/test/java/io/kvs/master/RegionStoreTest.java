package io.kvs.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The region id counter a split commits with: read once, then taken from this master's own last
 * commit (no ZooKeeper read inside a split's unavailable window), and read again after a commit
 * failed because someone else moved it.
 */
class RegionStoreTest {
  @TempDir Path directory;

  private final ClusterPaths paths = new ClusterPaths("test");
  private EmbeddedZooKeeper zookeeper;
  private CuratorFramework curator;
  private RegionStore store;

  @BeforeEach
  void start() throws Exception {
    zookeeper = EmbeddedZooKeeper.start(directory.resolve("zookeeper"), "127.0.0.1", 0, null, 0);
    curator = CuratorFrameworkFactory.newClient(zookeeper.connectString(), new RetryOneTime(100));
    curator.start();
    store = new RegionStore(curator, paths);
    store.ensurePath(paths.regions());
  }

  @AfterEach
  void stop() {
    curator.close();
    zookeeper.close();
  }

  @Test
  void aSplitCommitsWithTheCounterItLastWroteAndRereadsItOnceAnotherMovedIt() throws Exception {
    RegionDescriptor whole =
        new RegionDescriptor(1, new byte[0], new byte[0], "s1", List.of("s2"), 1, RegionState.OPEN);
    curator.create().forPath(paths.region(1), ClusterJson.encode(whole));

    Map<Long, RegionStore.Versioned> regions = store.regionsForPass();
    RegionStore.NextId first = store.nextRegionId(regions.keySet());
    assertThat(first).isEqualTo(new RegionStore.NextId(2, -1)); // no counter yet
    store.commitSplit(regions.get(1L), whole.split(key("m"), first.id(), true), first, false);
    assertThat(counter()).isEqualTo("4");

    // Its own write is what it knows: the next split commits with it.
    RegionStore.NextId second = store.nextRegionId(List.of());
    assertThat(second).isEqualTo(new RegionStore.NextId(4, 0));
    RegionStore.Versioned lower = store.regionsForPass().get(2L);
    store.commitSplit(lower, lower.region().split(key("f"), second.id(), true), second, false);
    assertThat(counter()).isEqualTo("6");

    // Someone else moves the counter: the cached one fails the commit whole, and the next read
    // goes to ZooKeeper.
    curator.setData().forPath(paths.nextRegionId(), "100".getBytes(StandardCharsets.US_ASCII));
    RegionStore.NextId stale = store.nextRegionId(List.of());
    assertThat(stale).isEqualTo(new RegionStore.NextId(6, 1));
    RegionStore.Versioned upper = store.regionsForPass().get(3L);
    assertThatThrownBy(
            () ->
                store.commitSplit(
                    upper, upper.region().split(key("t"), stale.id(), true), stale, false))
        .isInstanceOf(KeeperException.BadVersionException.class);
    assertThat(curator.checkExists().forPath(paths.region(3))).isNotNull();
    assertThat(curator.checkExists().forPath(paths.region(6))).isNull();
    assertThat(store.nextRegionId(List.of())).isEqualTo(new RegionStore.NextId(100, 2));
  }

  @Test
  void aRegionChangedBehindItsBackIsReadAgainWithinTheFullReadsPasses() throws Exception {
    for (long id = 1; id <= 25; id++) {
      RegionDescriptor region =
          new RegionDescriptor(
              id,
              key(String.format("k%03d", id)),
              key(String.format("k%03d", id + 1)),
              "s1",
              List.of(),
              1,
              RegionState.OPEN);
      curator.create().forPath(paths.region(id), ClusterJson.encode(region));
    }
    assertThat(store.regionsForPass()).hasSize(25); // the full read

    RegionDescriptor moved =
        new RegionDescriptor(17, key("k017"), key("k018"), "s2", List.of(), 2, RegionState.OPEN);
    curator.setData().forPath(paths.region(17), ClusterJson.encode(moved));
    int passes = 0;
    Map<Long, RegionStore.Versioned> regions;
    do {
      regions = store.regionsForPass();
      passes++;
    } while (regions.get(17L).version() == 0 && passes < RegionStore.PASSES_PER_FULL_READ);
    assertThat(regions.get(17L).version()).isEqualTo(1);
    assertThat(regions.get(17L).region()).isEqualTo(moved);
    assertThat(regions).hasSize(25);
  }

  private static byte[] key(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private String counter() throws Exception {
    return new String(curator.getData().forPath(paths.nextRegionId()), StandardCharsets.US_ASCII);
  }
}
