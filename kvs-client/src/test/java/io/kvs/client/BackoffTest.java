package io.kvs.client;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class BackoffTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  @Test
  void delaysDoubleFromFiveMillisecondsToHalfASecond() {
    Backoff backoff = new Backoff();
    long[] upper = {5, 10, 20, 40, 80, 160, 320, 500, 500};
    for (long bound : upper) {
      long delay = backoff.nextNanos();
      assertTrue(
          delay >= bound * MS / 2 && delay <= bound * MS, delay + " ns outside " + bound + " ms");
    }
  }

  @Test
  void anOpeningRegionIsRetriedAtMostTwentyFiveMillisecondsApart() {
    Backoff backoff = new Backoff();
    for (int i = 0; i < 20; i++) {
      long delay = backoff.nextNanos(Backoff.OPENING_MAX_NANOS);
      assertTrue(delay <= Backoff.OPENING_MAX_NANOS, delay + " ns");
    }
    // The doubling went on underneath: a refusal of another kind waits the full delay.
    assertTrue(backoff.nextNanos() >= Backoff.MAX_NANOS / 2);
  }

  @Test
  void aResetStartsOverAtFiveMilliseconds() {
    Backoff backoff = new Backoff();
    for (int i = 0; i < 10; i++) {
      backoff.nextNanos();
    }
    backoff.reset();
    assertTrue(backoff.nextNanos() <= 5 * MS);
  }
}
