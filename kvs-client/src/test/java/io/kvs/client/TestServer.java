package io.kvs.client;

import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.engine.Engine;
import io.kvs.engine.EngineOptions;
import io.kvs.engine.Region;
import io.kvs.fabric.FabricOptions;
import io.kvs.fabric.FabricServer;
import io.kvs.server.tcp.ClientPortOptions;
import io.kvs.server.tcp.NativeClientPort;
import io.kvs.service.RegionService;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A real region server in this JVM: an engine, the native request handler, the client TCP port (the
 * native client door, two shards) and (optionally) a fabric server on shm. Regions are engine
 * regions named after their ids.
 */
final class TestServer implements AutoCloseable {
  final String id;
  private final Engine engine;
  private final RegionService service;
  private final NativeClientPort tcp;
  private final FabricServer fabric;
  private final Map<Long, Region> regions = new HashMap<>();
  private boolean closed;

  TestServer(String id, Path directory, boolean withFabric) {
    this.id = id;
    this.engine = Engine.open(directory, EngineOptions.defaults());
    this.service = RegionService.create();
    this.tcp =
        NativeClientPort.start(
            service,
            ClientPortOptions.defaults().withShards(2),
            Optional.empty(),
            Optional.empty());
    this.fabric = withFabric ? FabricServer.start(FabricOptions.defaults("shm"), service) : null;
  }

  /** How clients reach it, as it would register in ZooKeeper. */
  ServerInfo info() {
    return new ServerInfo(
        id,
        "127.0.0.1",
        tcp.port(),
        fabric == null ? 0 : fabric.port(),
        fabric == null ? "" : "shm",
        0);
  }

  /** The engine region holding region {@code regionId}'s data on this server. */
  synchronized Region region(long regionId) {
    return regions.computeIfAbsent(regionId, id -> engine.createRegion("region-" + id));
  }

  /** Serves region {@code regionId} at {@code epoch} (replacing another epoch). */
  void attach(long regionId, long epoch) {
    service.attach(regionId, epoch, region(regionId));
  }

  /**
   * Seals region {@code regionId} for a split, as a region server does: its requests are held until
   * a daughter takes them over ({@link #attachDaughter}).
   */
  void seal(long regionId) {
    service.detachSealed(regionId, RegionService.SEALED_HOLD);
  }

  /**
   * Serves region {@code regionId}, keys {@code [start, end)}, at {@code epoch} as the daughter of
   * {@code parentId} (taking over the requests still addressed to it).
   */
  void attachDaughter(long regionId, long epoch, byte[] start, byte[] end, long parentId) {
    service.attach(
        regionId,
        epoch,
        region(regionId),
        true,
        start,
        end,
        List.of(),
        ReplicationMode.NONE,
        1,
        id,
        false,
        new byte[0]);
    service.takeOver(regionId, parentId);
  }

  /** Stops serving region {@code regionId}: its requests get WRONG_REGION. */
  void detach(long regionId) {
    service.detach(regionId);
  }

  /** TCP requests answered so far. */
  long tcpRequests() {
    return tcp.requests();
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (fabric != null) {
      fabric.close();
    }
    tcp.close();
    service.close();
    engine.close();
  }
}
