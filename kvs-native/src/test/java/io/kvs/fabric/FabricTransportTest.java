package io.kvs.fabric;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.ClosedException;
import io.kvs.core.KeyValue;
import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.wire.Opcode;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import io.kvs.engine.Engine;
import io.kvs.engine.EngineOptions;
import io.kvs.engine.Region;
import io.kvs.service.RegionService;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FabricTransportTest {
  @TempDir Path directory;

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static Reply await(CompletableFuture<Reply> future) throws Exception {
    return future.get(20, TimeUnit.SECONDS);
  }

  @ParameterizedTest
  @ValueSource(strings = {"shm", "tcp", "stream"})
  void clientsReachEngineRegionsThroughTheFabric(String provider) throws Exception {
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create();
        FabricServer server = FabricServer.start(FabricOptions.defaults(provider), service)) {
      Region region = engine.createRegion("users");
      service.attach(7, 3, region);
      try (FabricClient client =
          FabricClient.connect(FabricOptions.defaults(provider), "127.0.0.1", server.port())) {
        List<CompletableFuture<Reply>> puts = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
          puts.add(client.send(Request.put(0, 7, 3, bytes("k" + (1000 + i)), new byte[i * 7])));
        }
        for (CompletableFuture<Reply> put : puts) {
          assertThat(await(put).status()).isEqualTo(StatusCode.OK);
        }
        Reply got = await(client.send(Request.get(0, 7, 3, bytes("k1499"))));
        assertThat(got.value()).hasSize(499 * 7);
        assertThat(await(client.send(Request.get(0, 7, 3, bytes("nope")))).status())
            .isEqualTo(StatusCode.NOT_FOUND);
        Reply scan =
            await(client.send(Request.scan(0, 7, 3, bytes("k1100"), bytes("k1200"), 50, 1 << 20)));
        assertThat(scan.pairs()).hasSize(50);
        assertThat(scan.pairs().get(0)).isEqualTo(new KeyValue(bytes("k1100"), new byte[700]));
        assertThat(scan.more()).isTrue();
        Reply stale = await(client.send(Request.get(0, 7, 2, bytes("k1000"))));
        assertThat(stale.status()).isEqualTo(StatusCode.STALE_EPOCH);
        assertThat(await(client.send(Request.get(0, 8, 3, bytes("k1000")))).status())
            .isEqualTo(StatusCode.WRONG_REGION);
        // What the client wrote is in the engine.
        assertThat(region.get(bytes("k1200"))).hasSize(200 * 7);
        assertThat(await(client.send(Request.noop(0))).opcode()).isEqualTo(Opcode.NOOP);
      }
    }
  }

  /** Blocking calls drive the connection from their own threads, beside async sends. */
  @ParameterizedTest
  @ValueSource(strings = {"shm", "tcp", "stream"})
  void blockingCallsFromManyThreadsShareTheConnectionWithSends(String provider) throws Exception {
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create();
        FabricServer server = FabricServer.start(FabricOptions.defaults(provider), service)) {
      service.attach(7, 3, engine.createRegion("users"));
      FabricClient client =
          FabricClient.connect(FabricOptions.defaults(provider), "127.0.0.1", server.port());
      ExecutorService threads = Executors.newFixedThreadPool(4);
      try {
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
          int thread = t;
          done.add(
              threads.submit(
                  () -> {
                    for (int i = 0; i < 300; i++) {
                      byte[] key = bytes("t" + thread + "-" + i);
                      byte[] value = bytes("v" + i);
                      if (i % 3 == 0) {
                        assertThat(await(client.send(Request.put(0, 7, 3, key, value))).status())
                            .isEqualTo(StatusCode.OK);
                      } else {
                        assertThat(client.call(Request.put(0, 7, 3, key, value)).status())
                            .isEqualTo(StatusCode.OK);
                      }
                      assertThat(client.call(Request.get(0, 7, 3, key)).value()).isEqualTo(value);
                    }
                    return null;
                  }));
        }
        for (Future<?> future : done) {
          future.get(60, TimeUnit.SECONDS);
        }
        assertThat(client.outstanding()).isZero();
      } finally {
        threads.shutdownNow();
        client.close();
      }
      assertThatThrownBy(() -> client.call(Request.noop(0))).isInstanceOf(ClosedException.class);
    }
  }

  // Not shm: in one process, a closed shm endpoint unmaps the memory its in-process peers write
  // to, which a separate server process's exit does not; the departed-server case on shm needs
  // the server in another process.
  @ParameterizedTest
  @ValueSource(strings = {"tcp", "stream"})
  void aServerThatGoesAwayFailsTheClientsRequests(String provider) throws Exception {
    RegionService service = RegionService.create();
    FabricServer server = FabricServer.start(FabricOptions.defaults(provider), service);
    FabricClient client =
        FabricClient.connect(
            FabricOptions.defaults(provider).withTimeoutMillis(1000), "127.0.0.1", server.port());
    server.close();
    CompletableFuture<Reply> reply = client.send(Request.noop(0));
    assertThatThrownBy(() -> reply.get(20, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(KvsException.class);
    assertThatThrownBy(() -> client.call(Request.noop(0))).isInstanceOf(KvsException.class);
    client.close();
    service.close();
    assertThatThrownBy(() -> client.send(Request.noop(0)).get(5, TimeUnit.SECONDS))
        .hasCauseInstanceOf(KvsException.class);
  }

  @ParameterizedTest
  @ValueSource(strings = {"shm"})
  void connectingWhereNoServerListensIsAClearError(String provider) {
    assertThatThrownBy(() -> FabricClient.connect(FabricOptions.defaults(provider), "127.0.0.1", 1))
        .isInstanceOf(KvsException.class)
        .hasMessageContaining("connect");
  }
}
