package io.kvs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KvsExceptionTest {
  @Test
  void statusCodesAreUniqueAndRoundTrip() {
    Set<Integer> seen = new HashSet<>();
    for (StatusCode status : StatusCode.values()) {
      assertThat(seen.add(status.code())).as("duplicate code %d", status.code()).isTrue();
      assertThat(StatusCode.fromCode(status.code())).isEqualTo(status);
    }
    assertThat(StatusCode.fromCode(12345)).isEqualTo(StatusCode.INTERNAL);
  }

  @Test
  void ofPicksTheMostSpecificType() {
    assertThat(KvsException.of(StatusCode.CORRUPTION, "m")).isInstanceOf(CorruptionException.class);
    assertThat(KvsException.of(StatusCode.IO_ERROR, "m")).isInstanceOf(StorageIoException.class);
    assertThat(KvsException.of(StatusCode.TOO_LARGE, "m"))
        .isInstanceOf(InvalidRequestException.class);
    assertThat(KvsException.of(StatusCode.INVALID_ARGUMENT, "m"))
        .isInstanceOf(InvalidRequestException.class);
    assertThat(KvsException.of(StatusCode.CLOSED, "m")).isInstanceOf(ClosedException.class);
    KvsException busy = KvsException.of(StatusCode.BUSY, "later");
    assertThat(busy.getClass()).isEqualTo(KvsException.class);
    assertThat(busy.status()).isEqualTo(StatusCode.BUSY);
    assertThat(busy).hasMessage("later");
  }

  @Test
  void everyStatusExceptOkMapsToAnExceptionCarryingIt() {
    for (StatusCode status : StatusCode.values()) {
      if (status != StatusCode.OK) {
        assertThat(KvsException.of(status, "x").status()).isEqualTo(status);
      }
    }
    assertThatThrownBy(() -> KvsException.of(StatusCode.OK, "x"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void invalidRequestRejectsUnrelatedStatuses() {
    assertThatThrownBy(() -> new InvalidRequestException(StatusCode.BUSY, "m"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
