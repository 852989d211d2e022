package io.kvs.bench.chaos;

import io.kvs.bench.SortedLongs;
import io.kvs.bench.history.History;
import io.kvs.bench.history.Operation;
import io.kvs.bench.history.Operation.Outcome;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongBinaryOperator;

/**
 * How long each region (key range) went without serving anyone who asked: for every operation on a
 * region, the time from its invoke to the completion of the first successful operation on that
 * region invoked no earlier (its own success, or a later client's). The longest such wait of a
 * region is the longest stretch in which its clients tried and got nothing. A region nobody asks
 * during a fault shows no wait, so the load's clients stuck on one region do not make the others
 * look unavailable. An operation with no success after it on its region waits until the end of the
 * history.
 *
 * <p>Besides each region's longest wait it keeps every stretch in which a region failed its askers
 * longer than a given length (the bound the campaign checks): the waits past it that overlap,
 * merged into one stretch from the first such ask to the success that ended the last.
 */
final class Unavailability {
  /** The longest wait of one region and when it began. */
  record Worst(long region, long millis, long fromNanos) {}

  /** A stretch in which {@code region} failed everyone who asked for longer than the bound. */
  record Stretch(long region, long fromNanos, long toNanos) {
    long millis() {
      return (toNanos - fromNanos) / 1_000_000;
    }
  }

  private final Map<Long, Worst> byRegion;
  private final List<Stretch> over;

  private Unavailability(Map<Long, Worst> byRegion, List<Stretch> over) {
    this.byRegion = byRegion;
    this.over = over;
  }

  /**
   * Measures {@code history}, whose keys lie in {@code keys}' regions ({@code endNanos}: its end).
   */
  static Unavailability of(History history, KeySpace keys, long endNanos) {
    return of(history, keys, endNanos, Long.MAX_VALUE);
  }

  /**
   * Measures {@code history} as {@link #of(History, KeySpace, long)} does, and keeps the stretches
   * in which a region failed its askers for longer than {@code overMillis}.
   */
  static Unavailability of(History history, KeySpace keys, long endNanos, long overMillis) {
    Map<Long, List<Operation>> byRegion = new HashMap<>();
    for (Operation operation : history.operations()) {
      int index = keys.indexOf(operation.key());
      if (index >= 0) {
        byRegion.computeIfAbsent(keys.regionOf(index), r -> new ArrayList<>()).add(operation);
      }
    }
    Map<Long, Worst> worst = new TreeMap<>();
    List<Stretch> over = new ArrayList<>();
    new TreeMap<>(byRegion)
        .forEach(
            (region, operations) ->
                worst.put(region, worst(region, operations, endNanos, overMillis, over)));
    over.sort((a, b) -> Long.compare(a.fromNanos(), b.fromNanos()));
    return new Unavailability(worst, over);
  }

  private static Worst worst(
      long region, List<Operation> operations, long endNanos, long overMillis, List<Stretch> over) {
    operations.sort((a, b) -> Long.compare(a.invokeNanos(), b.invokeNanos()));
    int count = operations.size();
    // firstSuccess[i]: the earliest completion of a successful operation invoked at i or later.
    long[] firstSuccess = new long[count + 1];
    firstSuccess[count] = endNanos;
    for (int i = count - 1; i >= 0; i--) {
      Operation operation = operations.get(i);
      long done = operation.outcome() == Outcome.OK ? operation.completeNanos() : Long.MAX_VALUE;
      firstSuccess[i] = Math.min(done, firstSuccess[i + 1]);
    }
    long longest = 0;
    long from = 0;
    long[] invokes = operations.stream().mapToLong(Operation::invokeNanos).toArray();
    long overNanos =
        overMillis >= Long.MAX_VALUE / 1_000_000 ? Long.MAX_VALUE : overMillis * 1_000_000;
    Stretch open = null; // the stretch past the bound being merged (invokes come in order)
    for (int i = 0; i < count; i++) {
      // Operations invoked at the same moment as i count as "no earlier".
      int first = SortedLongs.firstAtOrAfter(invokes, invokes[i]);
      long until = Math.min(firstSuccess[first], endNanos);
      long wait = Math.max(0, until - invokes[i]);
      if (wait > longest) {
        longest = wait;
        from = invokes[i];
      }
      if (wait > overNanos) {
        if (open != null && invokes[i] <= open.toNanos()) {
          open = new Stretch(region, open.fromNanos(), Math.max(open.toNanos(), until));
        } else {
          if (open != null) {
            over.add(open);
          }
          open = new Stretch(region, invokes[i], until);
        }
      }
    }
    if (open != null) {
      over.add(open);
    }
    return new Worst(region, longest / 1_000_000, from);
  }

  /** Each region's longest wait, by region id. */
  Map<Long, Worst> byRegion() {
    return byRegion;
  }

  /** The stretches past the bound given to {@link #of(History, KeySpace, long, long)}, by start. */
  List<Stretch> over() {
    return over;
  }

  /**
   * The longest wait once {@code setAside} (the milliseconds of a window {@code [from, to]} not to
   * count) is taken from every stretch past the bound: the longest of those stretches less what is
   * set aside in it, or the longest wait of a region with no such stretch, whichever is longer.
   */
  long worstMillisLess(LongBinaryOperator setAside) {
    long longest = 0;
    Set<Long> counted = new HashSet<>();
    for (Stretch stretch : over) {
      counted.add(stretch.region());
      longest =
          Math.max(
              longest,
              stretch.millis() - setAside.applyAsLong(stretch.fromNanos(), stretch.toNanos()));
    }
    for (Worst worst : byRegion.values()) {
      if (!counted.contains(worst.region())) {
        longest = Math.max(longest, worst.millis());
      }
    }
    return longest;
  }

  /** The longest wait of all regions (null when no operation was recorded). */
  Worst worst() {
    return byRegion.values().stream()
        .max((a, b) -> Long.compare(a.millis(), b.millis()))
        .orElse(null);
  }
}
