package io.kvs.bench.protocol;

import io.kvs.engine.Engine;
import io.kvs.engine.EngineOptions;
import io.kvs.engine.Region;
import io.kvs.fabric.FabricOptions;
import io.kvs.fabric.FabricServer;
import io.kvs.server.tcp.ClientPortOptions;
import io.kvs.server.tcp.NativeClientPort;
import io.kvs.service.RegionService;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The server process of the protocol benchmark: one engine region holding the values the clients
 * read, served by the same {@link RegionService} over fabric {@code shm}, fabric {@code tcp}, the
 * {@code stream} transport and the native client door (its shards as many as the workers). Prints
 * {@code READY <shm port> <tcp port> <stream port> <native port>} and runs until its standard input
 * closes.
 *
 * <p>Usage: {@code ProtocolServerMain <data dir> <workers>}
 */
public final class ProtocolServerMain {
  /** The region the benchmark reads. */
  static final long REGION_ID = 1;

  static final long EPOCH = 1;

  private ProtocolServerMain() {}

  /** The key holding a value of {@code bytes} bytes. */
  static byte[] keyFor(int bytes) {
    return ("value-" + bytes).getBytes(StandardCharsets.UTF_8);
  }

  public static void main(String[] args) throws IOException {
    Path data = Path.of(args[0]);
    int workers = Integer.parseInt(args[1]);
    try (Engine engine = Engine.open(data.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create()) {
      Region region = engine.createRegion("bench");
      for (int bytes : ProtocolBenchmark.PAYLOADS) {
        region.put(keyFor(bytes), new byte[bytes]);
      }
      service.attach(REGION_ID, EPOCH, region);
      FabricOptions shm = FabricOptions.defaults("shm");
      FabricOptions tcp = FabricOptions.defaults("tcp");
      shm = new FabricOptions("shm", "", "127.0.0.1", 0, workers, shm.bufferBytes(), 5000);
      tcp = new FabricOptions("tcp", "127.0.0.1", "127.0.0.1", 0, workers, tcp.bufferBytes(), 5000);
      FabricOptions stream =
          new FabricOptions(
              "stream", "127.0.0.1", "127.0.0.1", 0, workers, tcp.bufferBytes(), 5000);
      ClientPortOptions door = ClientPortOptions.defaults().withShards(workers);
      try (FabricServer shmServer = FabricServer.start(shm, service);
          FabricServer tcpServer = FabricServer.start(tcp, service);
          FabricServer streamServer = FabricServer.start(stream, service);
          NativeClientPort nativeServer =
              NativeClientPort.start(service, door, Optional.empty(), Optional.empty())) {
        System.out.println(
            "READY "
                + shmServer.port()
                + " "
                + tcpServer.port()
                + " "
                + streamServer.port()
                + " "
                + nativeServer.port());
        System.out.flush();
        while (System.in.read() >= 0) {
          // runs until the benchmark closes our standard input
        }
      }
    }
  }
}
