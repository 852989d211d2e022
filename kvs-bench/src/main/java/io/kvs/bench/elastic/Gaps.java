package io.kvs.bench.elastic;

import io.kvs.bench.SortedLongs;
import io.kvs.core.cluster.Keys;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * How long a key range went unserved around a change of the region map, from the operation log:
 * over the operations on keys in the range that overlap the window [{@code at - window}, {@code at
 * + window}] around the moment the change was seen, the longest any of them took (succeeded or
 * not), and the longest stretch overlapping the window during which some operation on the range was
 * waiting (or had been refused) and none succeeded (the range's gap in availability, as its clients
 * saw it). A stretch in which nobody asked for the range is not a gap: the load's threads all
 * waiting on another range (a hand-over's) left one split's range unasked for 240 ms while every
 * operation on it was answered within 36 ms. The window covers the change's seal or hand-over,
 * which comes before the sample that shows it, and its daughters' opens after.
 */
final class Gaps {
  /**
   * One change's measure: milliseconds (-1 when no operation on the range overlapped the window),
   * the operations on the range in the window and those of them that failed.
   */
  record Gap(long longestWaitMs, long longestGapMs, int operations, int failed, long gapFromNanos) {
    Gap(long longestWaitMs, long longestGapMs, int operations, int failed) {
      this(longestWaitMs, longestGapMs, operations, failed, -1);
    }

    /** The larger of the two: how long the range was unavailable (-1: not measured). */
    long unavailableMs() {
      return Math.max(longestWaitMs, longestGapMs);
    }
  }

  // Operations that ended this long before the window may still be the last success before a gap.
  private static final long LOOK_BACK_NANOS = 2_000_000_000L;

  private final OperationLog log;
  private final long windowNanos;

  Gaps(OperationLog log, long windowNanos) {
    this.log = log;
    this.windowNanos = windowNanos;
  }

  /**
   * The gap of [{@code start}, {@code end}) around {@code atNanos}; not measured (-1) if the load
   * ended inside the window (a hand-over just before the cluster stopped looked unavailable until
   * the window's end: 1,068 ms, once).
   */
  Gap around(long atNanos, byte[] start, byte[] end) {
    long from = atNanos - windowNanos;
    long to = atNanos + windowNanos;
    if (log.size() == 0 || log.ended(log.size() - 1) < to) {
      return new Gap(-1, -1, 0, 0);
    }
    int first = firstEndedAfter(from - LOOK_BACK_NANOS);
    int last = firstEndedAfter(to + LOOK_BACK_NANOS);
    long longestWait = 0;
    int operations = 0;
    int failed = 0;
    long[] successes = new long[Math.max(0, last - first)];
    int count = 0;
    List<long[]> asked = new ArrayList<>();
    List<Integer> refused = new ArrayList<>();
    for (int i = first; i < last; i++) {
      if (!Keys.inRange(LoadKeys.key(log.keyCode(i)), start, end)) {
        continue;
      }
      long began = log.started(i);
      long ended = log.ended(i);
      if (log.ok(i)) {
        successes[count++] = ended;
      } else {
        refused.add(asked.size());
      }
      asked.add(new long[] {began, ended});
      if (ended < from || began > to) {
        continue;
      }
      operations++;
      failed += log.ok(i) ? 0 : 1;
      longestWait = Math.max(longestWait, ended - began);
    }
    if (operations == 0) {
      return new Gap(-1, -1, 0, 0); // nobody asked for the range then: nothing measured
    }
    long[] ends = Arrays.copyOf(successes, count);
    Arrays.sort(ends);
    // A refused operation leaves the range known to be out from its start until the next success
    // after the refusal, whether or not anyone asked in between.
    for (int index : refused) {
      long[] operation = asked.get(index);
      int next = SortedLongs.firstAtOrAfter(ends, operation[1]);
      operation[1] = next < ends.length ? ends[next] : Math.max(operation[1], to);
    }
    asked.sort(Comparator.comparingLong(operation -> operation[0]));
    long longestGap = 0;
    long gapFrom = -1;
    int block = 0;
    while (block < asked.size()) {
      // A stretch during which some operation on the range was waiting, cut at each success.
      long blockStart = asked.get(block)[0];
      long blockEnd = asked.get(block)[1];
      int next = block + 1;
      while (next < asked.size() && asked.get(next)[0] <= blockEnd) {
        blockEnd = Math.max(blockEnd, asked.get(next)[1]);
        next++;
      }
      long pieceStart = blockStart;
      for (int i = SortedLongs.firstAtOrAfter(ends, blockStart); pieceStart < blockEnd; i++) {
        long pieceEnd = i < ends.length ? Math.min(ends[i], blockEnd) : blockEnd;
        if (pieceEnd >= from && pieceStart <= to && pieceEnd - pieceStart > longestGap) {
          longestGap = pieceEnd - pieceStart;
          gapFrom = pieceStart;
        }
        pieceStart = pieceEnd;
      }
      block = next;
    }
    return new Gap(longestWait / 1_000_000, longestGap / 1_000_000, operations, failed, gapFrom);
  }

  /**
   * The first logged operation that ended at or after {@code nanos}. The log is appended as
   * operations end, so its end times rise but for a few microseconds between threads: the search
   * lands within those, and the look-back margins cover them.
   */
  private int firstEndedAfter(long nanos) {
    int low = 0;
    int high = log.size();
    while (low < high) {
      int middle = (low + high) >>> 1;
      if (log.ended(middle) < nanos) {
        low = middle + 1;
      } else {
        high = middle;
      }
    }
    return low;
  }
}
