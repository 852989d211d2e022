package io.kvs.client;

import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ServerInfo;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;

/**
 * A cluster as the client finds it: servers registered under {@code /kvs/<name>/servers} and
 * regions under {@code /kvs/<name>/regions}, written here the way the master would, and real
 * servers serving those regions at those epochs. Four regions split at "d", "h" and "p": 1 and 3 on
 * s1, 2 and 4 on s2, all at epoch 1; s3 runs but holds nothing.
 */
final class TestCluster implements AutoCloseable {
  private static final AtomicInteger NAMES = new AtomicInteger();

  static final List<String> SPLITS = List.of("d", "h", "p");

  final String name;
  final ClusterPaths paths;
  final String zookeeper;
  private final CuratorFramework curator;
  private final Path directory;
  private final boolean fabric;
  private final Map<String, TestServer> servers = new LinkedHashMap<>();
  private int restarts;
  private final List<KvsClient> clients = new ArrayList<>();

  TestCluster(String zookeeper, Path directory, boolean fabric) throws Exception {
    this(zookeeper, directory, fabric, nextName());
  }

  /** Sets up the cluster under {@code name} (see {@link #nextName}). */
  TestCluster(String zookeeper, Path directory, boolean fabric, String name) throws Exception {
    this.directory = directory;
    this.fabric = fabric;
    this.name = name;
    this.paths = new ClusterPaths(name);
    this.zookeeper = zookeeper;
    this.curator = CuratorFrameworkFactory.newClient(zookeeper, new RetryNTimes(10, 100));
    curator.start();
    curator.blockUntilConnected();
    try {
      for (String id : List.of("s1", "s2", "s3")) {
        TestServer server = new TestServer(id, directory.resolve(id), fabric);
        servers.put(id, server);
        register(id);
      }
      for (int i = 0; i <= SPLITS.size(); i++) {
        long regionId = i + 1;
        String primary = i % 2 == 0 ? "s1" : "s2";
        server(primary).attach(regionId, 1);
        write(descriptor(regionId, primary, 1, RegionState.OPEN));
      }
    } catch (Exception | Error e) {
      close();
      throw e;
    }
  }

  /** A cluster name not used before in this JVM. */
  static String nextName() {
    return "test-" + NAMES.incrementAndGet();
  }

  TestServer server(String id) {
    return servers.get(id);
  }

  /** Region {@code regionId}'s range with another primary, epoch and state. */
  static RegionDescriptor descriptor(long regionId, String primary, long epoch, RegionState state) {
    int i = (int) regionId - 1;
    byte[] start = i == 0 ? new byte[0] : Keys.utf8(SPLITS.get(i - 1));
    byte[] end = i == SPLITS.size() ? new byte[0] : Keys.utf8(SPLITS.get(i));
    return new RegionDescriptor(regionId, start, end, primary, List.of(), epoch, state);
  }

  /**
   * Replaces server {@code id} by a new process (new ports, empty engine, no region attached) and
   * registers it again.
   */
  TestServer restart(String id) throws Exception {
    servers.get(id).close();
    TestServer server = new TestServer(id, directory.resolve(id + "-" + ++restarts), fabric);
    servers.put(id, server);
    register(id);
    return server;
  }

  /** Registers server {@code id} (persistent here; the real servers' nodes are ephemeral). */
  void register(String id) throws Exception {
    byte[] json = ClusterJson.encode(server(id).info());
    String path = paths.server(id);
    if (curator.checkExists().forPath(path) == null) {
      curator.create().creatingParentsIfNeeded().forPath(path, json);
    } else {
      curator.setData().forPath(path, json);
    }
  }

  /** Registers a server by its description (one that is not a {@link TestServer}). */
  void register(ServerInfo info) throws Exception {
    curator
        .create()
        .creatingParentsIfNeeded()
        .forPath(paths.server(info.id()), ClusterJson.encode(info));
  }

  /** Removes server {@code id}'s registration (as its session ending would). */
  void unregister(String id) throws Exception {
    curator.delete().forPath(paths.server(id));
  }

  /** Writes a region's descriptor, as the master does. */
  void write(RegionDescriptor region) throws Exception {
    String path = paths.region(region.id());
    byte[] json = ClusterJson.encode(region);
    if (curator.checkExists().forPath(path) == null) {
      curator.create().creatingParentsIfNeeded().forPath(path, json);
    } else {
      curator.setData().forPath(path, json);
    }
  }

  /** Deletes a region's descriptor, as the master's commit of a split or merge does. */
  void delete(long regionId) throws Exception {
    curator.delete().forPath(paths.region(regionId));
  }

  /** The descriptor in ZooKeeper. */
  RegionDescriptor read(long regionId) throws Exception {
    return ClusterJson.decodeRegion(curator.getData().forPath(paths.region(regionId)));
  }

  /** A client of this cluster, closed with it. */
  KvsClient client(Transport transport, Duration timeout) {
    return client(transport, timeout, KvsClientBuilder.DEFAULT_MAX_IN_FLIGHT);
  }

  KvsClient client(Transport transport, Duration timeout, int maxInFlight) {
    KvsClient client =
        KvsClient.builder()
            .zookeeper(zookeeper)
            .cluster(name)
            .transport(transport)
            .operationTimeout(timeout)
            .maxInFlight(maxInFlight)
            .build();
    synchronized (clients) {
      clients.add(client);
    }
    return client;
  }

  @Override
  public void close() {
    synchronized (clients) {
      clients.forEach(KvsClient::close);
    }
    servers.values().forEach(TestServer::close);
    curator.close();
  }
}
