package io.kvs.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.service.RequestStats;
import org.junit.jupiter.api.Test;

class RequestMetersTest {
  @Test
  void aPercentileIsTheUpperBoundOfTheBucketHoldingIt() {
    long[] buckets = new long[RequestStats.BUCKETS];
    buckets[3] = 90; // [4, 8) us
    buckets[10] = 9; // [512, 1024) us
    buckets[20] = 1; // [2^19, 2^20) us
    assertThat(RequestMeters.percentile(buckets, 100, 0.5)).isEqualTo(8e-6);
    assertThat(RequestMeters.percentile(buckets, 100, 0.99)).isEqualTo(1024e-6);
    assertThat(RequestMeters.percentile(buckets, 100, 0.999)).isEqualTo((1 << 20) / 1e6);
  }

  @Test
  void theLastBucketReportsItsLowerBound() {
    long[] buckets = new long[RequestStats.BUCKETS];
    buckets[RequestStats.BUCKETS - 1] = 1;
    assertThat(RequestMeters.percentile(buckets, 1, 0.5))
        .isEqualTo((1L << (RequestStats.BUCKETS - 2)) / 1e6);
  }

  @Test
  void statusesAreNamedLowercase() {
    assertThat(RequestMeters.statusName(0)).isEqualTo("ok");
    assertThat(RequestMeters.statusName(9)).isEqualTo("not_primary");
    assertThat(RequestMeters.statusName(99)).isEqualTo("unknown");
  }
}
