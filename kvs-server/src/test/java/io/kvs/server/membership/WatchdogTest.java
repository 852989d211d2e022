package io.kvs.server.membership;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** What the watchdog counts as a stuck loop, and what it does not. */
class WatchdogTest {
  private static final Duration LIMIT = Duration.ofSeconds(4);
  private static final long ROUND = Watchdog.period(LIMIT).toNanos(); // 1 s

  @Test
  void aLoopSilentForTheLimitIsReportedOnceByName() {
    Watchdog.Tracker tracker = new Watchdog.Tracker(LIMIT);
    long now = 0;
    assertThat(tracker.observe(now, Map.of("shard 0", true, "replication", true))).isEmpty();
    for (int round = 1; round < 4; round++) {
      now += ROUND;
      assertThat(tracker.observe(now, Map.of("shard 0", true, "replication", false)))
          .as("round %d: silent for %d s", round, round)
          .isEmpty();
    }
    now += ROUND;
    Optional<Watchdog.Tracker.Stuck> stuck =
        tracker.observe(now, Map.of("shard 0", true, "replication", false));
    assertThat(stuck).isPresent();
    assertThat(stuck.get().loop()).isEqualTo("replication");
    assertThat(stuck.get().silent()).isEqualTo(LIMIT);
  }

  @Test
  void anAnswerStartsTheCountAfresh() {
    Watchdog.Tracker tracker = new Watchdog.Tracker(LIMIT);
    long now = 0;
    tracker.observe(now, Map.of("shard 1", true));
    for (int round = 1; round <= 12; round++) {
      now += ROUND;
      // Silent three rounds in four: never four in a row.
      boolean answered = round % 4 == 0;
      assertThat(tracker.observe(now, Map.of("shard 1", answered))).as("round %d", round).isEmpty();
    }
  }

  @Test
  void aRoundThatComesLateCountsNothing() {
    // The process was paused (SIGSTOP) between two rounds: what its loops did meanwhile is not
    // known, and the pause is the session timeout's business, not the watchdog's.
    Watchdog.Tracker tracker = new Watchdog.Tracker(LIMIT);
    long now = 0;
    tracker.observe(now, Map.of("shard 0", true));
    now += ROUND;
    assertThat(tracker.observe(now, Map.of("shard 0", false))).isEmpty();
    now += 30 * ROUND; // late: the pause
    assertThat(tracker.observe(now, Map.of("shard 0", false))).isEmpty();
    for (int round = 1; round < 4; round++) {
      now += ROUND;
      assertThat(tracker.observe(now, Map.of("shard 0", false)))
          .as("round %d after the pause", round)
          .isEmpty();
    }
    now += ROUND;
    assertThat(tracker.observe(now, Map.of("shard 0", false))).isPresent();
  }

  @Test
  void theWatchdogCallsBackOnceForALoopThatStopsAnswering() throws Exception {
    AtomicInteger rounds = new AtomicInteger();
    AtomicInteger called = new AtomicInteger();
    CompletableFuture<String> stuck = new CompletableFuture<>();
    Watchdog watchdog =
        Watchdog.start(
            Duration.ofSeconds(1),
            // Answers for five rounds, then never again.
            () -> Map.of("loop", rounds.incrementAndGet() <= 5),
            (loop, silent) -> {
              called.incrementAndGet();
              stuck.complete(loop + " " + silent.toMillis());
            });
    try {
      String report = stuck.get(30, TimeUnit.SECONDS);
      assertThat(report).startsWith("loop ");
      assertThat(Long.parseLong(report.substring(5))).isGreaterThanOrEqualTo(1_000);
      int roundsThen = rounds.get();
      assertThat(roundsThen).isGreaterThanOrEqualTo(9); // 5 answered, >= 4 silent
      // No round after the report.
      Thread.sleep(600); // nothing to await: asserting that nothing more happens
      assertThat(rounds.get()).isEqualTo(roundsThen);
      assertThat(called.get()).isEqualTo(1);
    } finally {
      watchdog.close();
    }
  }

  @Test
  void theThreadStateOfALoopNamesItsThreadOrSaysItHasNone() {
    String name = Thread.currentThread().getName();
    assertThat(Watchdog.threadState("this test (no-such-thread-xyz)"))
        .isEqualTo("no thread named no-such-thread-xyz");
    assertThat(Watchdog.threadState("no parentheses")).isEqualTo("unknown");
    Thread.currentThread().setName("kvs-wd-test");
    try {
      assertThat(Watchdog.threadState("the test (kvs-wd-test)"))
          .startsWith("tid ")
          .contains(" state R");
    } finally {
      Thread.currentThread().setName(name);
    }
  }
}
