package io.kvs.bench.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class ClientErrorsTest {
  @Test
  void countsEachMessageAndFindsThoseOfAStretch() {
    ClientErrors errors = new ClientErrors();
    long before = System.nanoTime();
    errors.record(new IllegalStateException("region 3 busy"));
    errors.record(new IllegalStateException("region 3 busy"));
    long between = System.nanoTime();
    errors.record(new IllegalArgumentException("region 4 gone"));
    List<ClientErrors.Seen> all = errors.during(before, System.nanoTime());
    assertThat(all).extracting(ClientErrors.Seen::count).containsExactly(2L, 1L);
    assertThat(all.get(0).message()).isEqualTo("IllegalStateException: region 3 busy");
    assertThat(errors.during(between, System.nanoTime()))
        .extracting(ClientErrors.Seen::message)
        .containsExactly("IllegalArgumentException: region 4 gone");
    assertThat(errors.during(before - 10, before - 5)).isEmpty();
  }

  @Test
  void keepsABoundedNumberOfDistinctMessages() {
    ClientErrors errors = new ClientErrors();
    for (int i = 0; i < ClientErrors.DISTINCT_MAX + 10; i++) {
      errors.record(new IllegalStateException("error " + i));
    }
    assertThat(errors.during(0, Long.MAX_VALUE)).hasSize(ClientErrors.DISTINCT_MAX);
    assertThat(errors.dropped()).isEqualTo(10);
  }
}
