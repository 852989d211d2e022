package io.kvs.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.StatusCode;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.SplitOrigin;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The client follows the region map: redirections after epoch changes and moves, direct re-reads
 * when its cache lags, and a clear failure when a region stays unavailable.
 */
class KvsClientRoutingTest extends ClusterTestBase {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  /** The server moves to a new epoch before ZooKeeper says so: STALE_EPOCH until it does. */
  @ParameterizedTest
  @EnumSource(Transport.class)
  void staleEpochWaitsForTheNewEpoch(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    client.put(bytes("kiwi"), bytes("v1"));

    cluster.server("s1").attach(3, 2); // requests at epoch 1 now get STALE_EPOCH
    CompletableFuture<Optional<byte[]>> pending = client.getAsync(bytes("kiwi"));
    RegionDescriptor next = TestCluster.descriptor(3, "s1", 2, RegionState.OPEN);
    cluster.write(next);

    assertThat(pending.get(10, TimeUnit.SECONDS).map(ClusterTestBase::text)).hasValue("v1");
    assertThat(client.regionMap().byId(3)).hasValue(next);
  }

  /**
   * With the cache held back (as if it lagged), a STALE_EPOCH reply makes the client re-read the
   * region's znode itself, and the retry goes through.
   */
  @ParameterizedTest
  @EnumSource(Transport.class)
  void staleReplyRereadsTheRegionWhenTheCacheLags(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    client.put(bytes("kiwi"), bytes("v1"));
    client.metadata().pauseCacheEvents(true);

    cluster.server("s1").attach(3, 5);
    RegionDescriptor next = TestCluster.descriptor(3, "s1", 5, RegionState.OPEN);
    cluster.write(next);
    assertThat(client.regionMap().byId(3).orElseThrow().epoch()).isEqualTo(1);

    client.put(bytes("kiwi"), bytes("v2"));
    assertThat(client.regionMap().byId(3)).hasValue(next);
    assertThat(cluster.server("s1").region(3).get(bytes("kiwi"))).isEqualTo(bytes("v2"));

    client.metadata().pauseCacheEvents(false);
    assertThat(client.regionMap().byId(3)).hasValue(next);
    assertThat(client.get(bytes("kiwi")).map(ClusterTestBase::text)).hasValue("v2");
  }

  /** A region moves to another server: WRONG_REGION from the old one until the map says where. */
  @ParameterizedTest
  @EnumSource(Transport.class)
  void movedRegionIsFollowedToItsNewServer(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    client.put(bytes("apple"), bytes("on s1"));

    cluster.server("s1").detach(1);
    CompletableFuture<Void> pending = client.putAsync(bytes("banana"), bytes("on s3"));
    cluster.server("s3").attach(1, 2);
    cluster.write(TestCluster.descriptor(1, "s3", 2, RegionState.OPEN));

    pending.get(10, TimeUnit.SECONDS);
    assertThat(cluster.server("s3").region(1).get(bytes("banana"))).isEqualTo(bytes("on s3"));
    assertThat(cluster.server("s1").region(1).get(bytes("banana"))).isNull();
    // The data did not move with the region in this test: s3's copy of region 1 lacks "apple".
    assertThat(client.get(bytes("apple"))).isEmpty();
  }

  /** A moved region while the cache lags: the direct re-read finds the new primary's entry too. */
  @ParameterizedTest
  @EnumSource(Transport.class)
  void movedRegionIsFollowedWhenTheCacheLags(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    client.put(bytes("zebra"), bytes("on s2"));
    cluster.unregister("s3");
    awaitCondition(
        "s3 gone from the client's view",
        TIMEOUT,
        () -> !client.metadata().current().servers().containsKey("s3"));
    client.metadata().pauseCacheEvents(true);

    cluster.server("s2").detach(4);
    cluster.server("s3").attach(4, 2);
    cluster.register("s3");
    cluster.write(TestCluster.descriptor(4, "s3", 2, RegionState.OPEN));

    client.put(bytes("zebra"), bytes("on s3"));
    assertThat(cluster.server("s3").region(4).get(bytes("zebra"))).isEqualTo(bytes("on s3"));
    client.metadata().pauseCacheEvents(false);
  }

  /**
   * A region is replaced (as by a split's commit) and the cache has seen it go but not what
   * replaced it: a key in the hole makes the client list the regions and read the new one itself.
   */
  @ParameterizedTest
  @EnumSource(Transport.class)
  void aHoleInTheMapIsFilledByReadingTheRegionsDirectly(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    RegionDescriptor old = client.regionMap().byId(4).orElseThrow();
    cluster.server(old.primary()).detach(4);
    cluster.delete(4);
    awaitCondition(
        "region 4 gone from the client's map", TIMEOUT, () -> client.regionMap().byId(4).isEmpty());
    client.metadata().pauseCacheEvents(true);

    RegionDescriptor successor =
        new RegionDescriptor(9, old.start(), old.end(), "s3", List.of(), 1, RegionState.OPEN);
    cluster.server("s3").attach(9, 1);
    cluster.write(successor);
    client.put(bytes("zebra"), bytes("in the successor"));
    assertThat(client.regionMap().byId(9)).hasValue(successor);
    assertThat(cluster.server("s3").region(9).get(bytes("zebra")))
        .isEqualTo(bytes("in the successor"));
    client.metadata().pauseCacheEvents(false);
  }

  /**
   * A split on the region's primary: requests sent between the seal and the daughters' opens wait
   * for them (the server holds them), and a read in flight is not abandoned when the map replaces
   * the parent by daughters led by the server it asked: each request is answered once.
   */
  @Test
  void requestsInFlightThroughASplitOnTheirPrimaryAreAnsweredOnce() throws Exception {
    startCluster(Transport.TCP);
    KvsClient client = cluster.client(Transport.TCP, TIMEOUT);
    RegionDescriptor parent = client.regionMap().byId(4).orElseThrow();
    TestServer server = cluster.server(parent.primary());
    client.put(bytes("quail"), bytes("before"));
    server.seal(4);
    long before = server.tcpRequests();
    CompletableFuture<Void> put = client.putAsync(bytes("yak"), bytes("during"));
    CompletableFuture<Optional<byte[]>> get = client.getAsync(bytes("quail"));

    byte[] splitKey = bytes("t");
    RegionDescriptor lower =
        new RegionDescriptor(
            5,
            parent.start(),
            splitKey,
            parent.primary(),
            List.of(),
            List.of(),
            2,
            RegionState.OPENING,
            new SplitOrigin(4, 6));
    RegionDescriptor upper =
        new RegionDescriptor(
            6,
            splitKey,
            parent.end(),
            parent.primary(),
            List.of(),
            List.of(),
            2,
            RegionState.OPENING,
            new SplitOrigin(4, 5));
    cluster.delete(4);
    cluster.write(lower);
    cluster.write(upper);
    awaitCondition(
        "the daughters in the client's map",
        TIMEOUT,
        () -> client.regionMap().byId(4).isEmpty() && client.regionMap().byId(6).isPresent());
    assertThat(put).isNotDone();
    assertThat(get).isNotDone();

    server.attachDaughter(5, 2, parent.start(), splitKey, 4);
    server.attachDaughter(6, 2, splitKey, parent.end(), 4);
    put.get(10, TimeUnit.SECONDS);
    assertThat(get.get(10, TimeUnit.SECONDS)).isEmpty(); // daughter 5's region here is new
    assertThat(server.tcpRequests() - before).isEqualTo(2);
    assertThat(server.region(6).get(bytes("yak"))).isEqualTo(bytes("during"));
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void unregisteredPrimaryFailsAfterTheOperationTimeout(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, Duration.ofSeconds(1));
    RegionDescriptor orphan = TestCluster.descriptor(4, "s9", 2, RegionState.OPEN);
    cluster.write(orphan);
    awaitRegion(client, orphan);

    long start = System.nanoTime();
    assertThatThrownBy(() -> client.put(bytes("zebra"), bytes("v")))
        .isInstanceOfSatisfying(
            RegionUnavailableException.class,
            e -> {
              assertThat(e.regionId()).isEqualTo(4);
              assertThat(e.status()).isEqualTo(StatusCode.NOT_PRIMARY);
            })
        .hasMessageContaining("put: region 4 not available within 1 s")
        .hasMessageContaining("s9 is not a live server");
    long elapsedMillis = (System.nanoTime() - start) / 1_000_000;
    assertThat(elapsedMillis).isBetween(900L, 5000L);
    // Other regions are unaffected.
    client.put(bytes("apple"), bytes("v"));
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void regionWithoutPrimaryFailsAfterTheOperationTimeout(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, Duration.ofSeconds(1));
    RegionDescriptor offline = TestCluster.descriptor(2, "", 2, RegionState.OFFLINE);
    cluster.write(offline);
    awaitRegion(client, offline);

    assertThatThrownBy(() -> client.get(bytes("dog")))
        .isInstanceOf(RegionUnavailableException.class)
        .hasMessageContaining("get: region 2 not available within 1 s: it has no primary");
    assertThatThrownBy(() -> client.scan(bytes("a"), new byte[0], 100))
        .isInstanceOf(RegionUnavailableException.class)
        .hasMessageContaining("scan: region 2 not available");
  }

  /**
   * The primary's process is gone but still registered: connecting fails until the timeout. (The
   * client has no connection to it yet: an in-process shm fabric client still connected to a fabric
   * server that closes can crash the JVM, see {@link #restartedPrimaryIsReconnected}.)
   */
  @ParameterizedTest
  @EnumSource(Transport.class)
  void deadPrimaryFailsAfterTheOperationTimeout(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, Duration.ofSeconds(1));
    client.put(bytes("apple"), bytes("v")); // region 1, on s1
    cluster.server("s2").close();

    long start = System.nanoTime();
    assertThatThrownBy(() -> client.get(bytes("zebra")))
        .isInstanceOfSatisfying(
            RegionUnavailableException.class, e -> assertThat(e.regionId()).isEqualTo(4))
        .hasMessageContaining("get: region 4 not available within 1 s")
        .hasMessageContaining("cannot reach server s2");
    assertThat((System.nanoTime() - start) / 1_000_000).isBetween(900L, 5000L);
    assertThat(client.get(bytes("apple")).map(ClusterTestBase::text)).hasValue("v"); // s1 serves
  }

  /**
   * The primary restarts at another address: the broken connection is dropped and one to the new
   * address made. TCP only: with the fabric transport on shm, closing a fabric server in this
   * process while a client here is still connected to it can crash the JVM in the native client (a
   * write into the server's unmapped shm region); in production they are separate processes.
   */
  @Test
  void restartedPrimaryIsReconnected() throws Exception {
    Transport transport = Transport.TCP;
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    client.put(bytes("zebra"), bytes("v"));
    assertThat(client.openConnections()).isEqualTo(1);

    TestServer restarted = cluster.restart("s2");
    restarted.attach(4, 2);
    cluster.write(TestCluster.descriptor(4, "s2", 2, RegionState.OPEN));
    client.put(bytes("zebra"), bytes("again"));

    assertThat(restarted.region(4).get(bytes("zebra"))).isEqualTo(bytes("again"));
    assertThat(client.get(bytes("zebra")).map(ClusterTestBase::text)).hasValue("again");
    assertThat(client.openConnections()).isEqualTo(1);
  }
}
