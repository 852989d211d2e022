package io.kvs.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.control.HeldRegion;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The master's own splits ({@link SplitTriggers}): by size, by a load sustained over the window,
 * one region at a time, never a region seen for less than a window, never while a request is
 * pending or the region is not quiet, and a counter that goes back (a reopened region) is no load.
 */
class SplitTriggersTest {
  private static final Duration WINDOW = Duration.ofSeconds(10);
  private static final long SECOND = 1_000_000_000L;

  private long now = 1_000 * SECOND;
  private final Map<Long, long[]> reported = new HashMap<>(); // id -> {requests, bytes}

  private static RegionDescriptor region(long id) {
    return new RegionDescriptor(
        id,
        new byte[] {(byte) id},
        new byte[] {(byte) (id + 1)},
        "s1",
        List.of("s2"),
        3,
        RegionState.OPEN);
  }

  private Map<String, Map<Long, HeldRegion>> held() {
    Map<Long, HeldRegion> s1 = new HashMap<>();
    reported.forEach(
        (id, values) ->
            s1.put(
                id,
                new HeldRegion(
                    id,
                    3,
                    RegionRole.PRIMARY,
                    true,
                    false,
                    List.of("s2"),
                    List.of(),
                    values[0],
                    List.of(),
                    values[1])));
    return Map.of("s1", s1, "s2", Map.of());
  }

  private Optional<SplitTriggers.Choice> pass(SplitTriggers triggers, boolean pending) {
    return triggers.choose(
        List.of(region(1), region(2), region(3)), held(), pending, region -> true);
  }

  @Test
  void aRegionPastTheSizeSplitsOnceSeenForAWindowAndOneAtATime() {
    SplitTriggers triggers = new SplitTriggers(new SplitOptions(1000, 0, 0, WINDOW), () -> now);
    reported.put(1L, new long[] {0, 999});
    reported.put(2L, new long[] {0, 5000});
    reported.put(3L, new long[] {0, 7000});
    assertThat(pass(triggers, false)).as("seen for less than a window").isEmpty();
    now += WINDOW.toNanos();
    Optional<SplitTriggers.Choice> choice = pass(triggers, false);
    assertThat(choice).isPresent();
    assertThat(choice.get().regionId()).isEqualTo(2); // the first by id over the size
    assertThat(choice.get().why()).contains("5000 bytes");
    assertThat(pass(triggers, true)).as("a request pending").isEmpty();
    // Below the size again (a backup's entry, or a region emptied): not split by size.
    reported.put(2L, new long[] {0, 0});
    reported.put(3L, new long[] {0, 0});
    assertThat(pass(triggers, false)).isEmpty();
  }

  @Test
  void theSizeStepsUpWithTheRegionsAPrimaryLeads() {
    SplitOptions options = new SplitOptions(1000, 10, 0, WINDOW);
    assertThat(options.sizeFor(1)).isEqualTo(10);
    assertThat(options.sizeFor(2)).isEqualTo(80);
    assertThat(options.sizeFor(4)).isEqualTo(640);
    assertThat(options.sizeFor(5)).as("capped at --split-size").isEqualTo(1000);
    assertThat(options.sizeFor(10_000)).isEqualTo(1000);
    assertThat(new SplitOptions(1000, 0, 0, WINDOW).sizeFor(1)).as("no steps").isEqualTo(1000);
    assertThat(new SplitOptions(0, 10, 0, WINDOW).sizeFor(1)).as("never by size").isZero();

    // s1 leads the three regions of pass(): each splits at 270 bytes.
    SplitTriggers triggers = new SplitTriggers(options, () -> now);
    reported.put(1L, new long[] {0, 269});
    reported.put(2L, new long[] {0, 100});
    reported.put(3L, new long[] {0, 270});
    pass(triggers, false);
    now += WINDOW.toNanos();
    Optional<SplitTriggers.Choice> choice = pass(triggers, false);
    assertThat(choice.map(SplitTriggers.Choice::regionId)).contains(3L);
    assertThat(choice.get().why()).contains("270 while it leads 3 regions");
    // Alone on its primary, a region splits at the first size.
    Optional<SplitTriggers.Choice> alone =
        triggers.choose(List.of(region(2)), held(), false, region -> true);
    assertThat(alone.map(SplitTriggers.Choice::regionId)).contains(2L);
  }

  @Test
  void aLoadSplitsOnlyWhenSustainedForTheWindow() {
    SplitTriggers triggers = new SplitTriggers(new SplitOptions(0, 0, 100, WINDOW), () -> now);
    long requests = 0;
    reported.put(1L, new long[] {requests, 0});
    now += WINDOW.toNanos(); // seen for a window
    pass(triggers, false);
    // 200 requests a second for 9 s: not yet.
    for (int second = 0; second < 9; second++) {
      now += SECOND;
      requests += 200;
      reported.put(1L, new long[] {requests, 0});
      assertThat(pass(triggers, false)).as("after %d s", second + 1).isEmpty();
    }
    // A quiet second starts the window again.
    now += SECOND;
    requests += 10;
    reported.put(1L, new long[] {requests, 0});
    assertThat(pass(triggers, false)).isEmpty();
    for (int second = 0; second < 11; second++) {
      now += SECOND;
      requests += 200;
      reported.put(1L, new long[] {requests, 0});
      Optional<SplitTriggers.Choice> choice = pass(triggers, false);
      if (second < 10) {
        assertThat(choice).as("after %d hot seconds", second + 1).isEmpty();
      } else {
        assertThat(choice).isPresent();
        assertThat(choice.get().regionId()).isEqualTo(1);
        assertThat(choice.get().why()).contains("200 requests a second");
      }
    }
  }

  @Test
  void aCounterThatWentBackIsNoLoadAndAnUnquietRegionWaits() {
    SplitTriggers triggers = new SplitTriggers(new SplitOptions(0, 0, 100, WINDOW), () -> now);
    reported.put(1L, new long[] {1_000_000, 0});
    now += WINDOW.toNanos();
    pass(triggers, false);
    now += SECOND;
    reported.put(1L, new long[] {5, 0}); // reopened: the counter started over
    pass(triggers, false);
    for (int second = 0; second < 11; second++) {
      now += SECOND;
      reported.put(1L, new long[] {5 + 200L * (second + 1), 0});
      assertThat(triggers.choose(List.of(region(1)), held(), false, region -> false))
          .as("not quiet")
          .isEmpty();
    }
    assertThat(triggers.choose(List.of(region(1)), held(), false, region -> true)).isPresent();
  }

  @Test
  void offSplitsNothing() {
    SplitTriggers triggers = new SplitTriggers(SplitOptions.OFF, () -> now);
    reported.put(1L, new long[] {0, Long.MAX_VALUE / 2});
    now += WINDOW.toNanos();
    assertThat(pass(triggers, false)).isEmpty();
  }
}
