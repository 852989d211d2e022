package io.kvs.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Compare-and-set, put-if-absent, delete-if-equals and increments against real servers, over both
 * transports: each writes only what it found expected, says what it found otherwise, and concurrent
 * increments of one counter lose none.
 */
class KvsClientConditionalTest extends ClusterTestBase {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  @ParameterizedTest
  @EnumSource(Transport.class)
  void aConditionalWriteAppliesOnlyOverTheValueItExpected(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    byte[] key = bytes("document");

    assertThat(client.putIfAbsent(key, bytes("v1")).isApplied()).isTrue();
    CasResult taken = client.putIfAbsent(key, bytes("v2"));
    assertThat(taken.isApplied()).isFalse();
    assertThat(taken.current()).hasValueSatisfying(v -> assertThat(text(v)).isEqualTo("v1"));

    CasResult stale = client.compareAndSet(key, bytes("v0"), bytes("v2"));
    assertThat(stale.isApplied()).isFalse();
    assertThat(stale.current()).hasValueSatisfying(v -> assertThat(text(v)).isEqualTo("v1"));
    assertThat(client.compareAndSet(key, bytes("v1"), bytes("v2")).isApplied()).isTrue();
    assertThat(client.get(key)).hasValueSatisfying(v -> assertThat(text(v)).isEqualTo("v2"));

    assertThat(client.deleteIfEquals(key, bytes("v1")).isApplied()).isFalse();
    assertThat(client.deleteIfEquals(key, bytes("v2")).isApplied()).isTrue();
    assertThat(client.get(key)).isEmpty();
    CasResult gone = client.compareAndSet(key, bytes("v2"), bytes("v3"));
    assertThat(gone.isApplied()).isFalse();
    assertThat(gone.current()).isEmpty();

    // Keys in every region: each is decided by its own region's primary.
    for (String each : List.of("apple", "kiwi", "zebra")) {
      assertThat(client.putIfAbsentAsync(bytes(each), bytes(each)).join().isApplied()).isTrue();
      assertThat(client.compareAndSetAsync(bytes(each), bytes(each), bytes("x")).join().isApplied())
          .isTrue();
    }
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void concurrentIncrementsOfOneCounterLoseNone(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    byte[] counter = bytes("counter");
    int clients = 4;
    int each = 250;
    List<CompletableFuture<Long>> sums = new ArrayList<>();
    for (int round = 0; round < each; round++) {
      for (int c = 0; c < clients; c++) {
        sums.add(client.incrementAsync(counter, 1));
      }
    }
    // Every sum is the counter after one increment: all of 1..N, each once.
    List<Long> seen = new ArrayList<>();
    sums.forEach(sum -> seen.add(sum.join()));
    assertThat(seen).doesNotHaveDuplicates().hasSize(clients * each);
    assertThat(seen.stream().mapToLong(Long::longValue).max().orElseThrow())
        .isEqualTo(clients * each);
    byte[] stored = client.get(counter).orElseThrow();
    assertThat(ByteBuffer.wrap(stored).order(ByteOrder.LITTLE_ENDIAN).getLong())
        .isEqualTo(clients * each);
    assertThat(client.increment(counter, -clients * each)).isZero();

    // A value that is no counter is refused, and nothing is written.
    client.put(bytes("text"), bytes("hello"));
    assertThatThrownBy(() -> client.increment(bytes("text"), 1))
        .isInstanceOf(KvsException.class)
        .satisfies(
            e -> assertThat(((KvsException) e).status()).isEqualTo(StatusCode.INVALID_ARGUMENT))
        .hasMessageContaining("not an 8-byte counter");
    assertThat(client.get(bytes("text")))
        .hasValueSatisfying(v -> assertThat(text(v)).isEqualTo("hello"));
  }
}
