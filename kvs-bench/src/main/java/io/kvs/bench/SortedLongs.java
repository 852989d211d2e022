package io.kvs.bench;

import java.util.Arrays;

/** Searches in sorted arrays of longs (the benchmarks' operation logs). */
public final class SortedLongs {
  private SortedLongs() {}

  /** The index of the first element of {@code sorted} at or after {@code value}. */
  public static int firstAtOrAfter(long[] sorted, long value) {
    int index = Arrays.binarySearch(sorted, value);
    if (index < 0) {
      return -index - 1;
    }
    while (index > 0 && sorted[index - 1] == value) {
      index--;
    }
    return index;
  }
}
