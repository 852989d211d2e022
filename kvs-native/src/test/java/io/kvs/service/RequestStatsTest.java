package io.kvs.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.StatusCode;
import io.kvs.core.wire.Request;
import io.kvs.core.wire.WireCodec;
import io.kvs.engine.Engine;
import io.kvs.engine.EngineOptions;
import io.kvs.engine.EngineStats;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RequestStatsTest {
  private static final int PUT = 1;
  private static final int GET = 2;

  @TempDir Path directory;

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static void call(RegionService service, Request request) {
    byte[] encoded = WireCodec.encode(request);
    ByteBuffer buffer = ByteBuffer.allocateDirect(encoded.length).put(encoded).flip();
    service.handle(buffer, 0, encoded.length);
  }

  @Test
  void countsRequestsByOperationAndStatusWithTheirLatencies() {
    try (Engine engine = Engine.open(directory.resolve("volume"), EngineOptions.defaults());
        RegionService service = RegionService.create()) {
      service.attach(5, 1, engine.createRegion("r"));
      call(service, Request.put(1, 5, 1, bytes("k"), bytes("v")));
      call(service, Request.get(2, 5, 1, bytes("k")));
      call(service, Request.get(3, 5, 1, bytes("missing")));
      call(service, Request.get(4, 6, 1, bytes("k"))); // a region not served here

      RequestStats stats = service.requestStats();
      assertThat(stats.count(PUT, StatusCode.OK.code())).isEqualTo(1);
      assertThat(stats.count(GET, StatusCode.OK.code())).isEqualTo(1);
      assertThat(stats.count(GET, StatusCode.NOT_FOUND.code())).isEqualTo(1);
      assertThat(stats.count(GET, StatusCode.WRONG_REGION.code())).isEqualTo(1);
      assertThat(stats.count(GET)).isEqualTo(3);
      long inBuckets = 0;
      for (int bucket = 0; bucket < RequestStats.BUCKETS; bucket++) {
        inBuckets += stats.bucket(GET, bucket);
      }
      assertThat(inBuckets).isEqualTo(3);
      assertThat(stats.latencySumNanos(GET)).isPositive();
      assertThat(RequestStats.operationName(GET)).isEqualTo("get");

      service.requestMetrics(false);
      call(service, Request.get(5, 5, 1, bytes("k")));
      assertThat(service.requestStats().count(GET)).isEqualTo(3);
      service.requestMetrics(true);
      call(service, Request.get(6, 5, 1, bytes("k")));
      assertThat(service.requestStats().count(GET)).isEqualTo(4);

      // The engine's own counters: the put's L0 memory within the L0s' share of the budget.
      EngineStats engineStats = engine.stats();
      assertThat(engineStats.l0Bytes()).isPositive();
      assertThat(engineStats.l0BudgetBytes()).isGreaterThan(engineStats.l0Bytes());
      assertThat(engineStats.cacheCapacityBytes()).isPositive();
    }
  }
}
