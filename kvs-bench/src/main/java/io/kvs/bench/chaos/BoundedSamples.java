package io.kvs.bench.chaos;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * A probe's last {@code capacity} samples, oldest first (the oldest dropped when full); one thread
 * adds, any thread reads.
 *
 * @param <T> the sample
 */
final class BoundedSamples<T> {
  private final ArrayDeque<T> samples = new ArrayDeque<>();
  private final int capacity;

  BoundedSamples(int capacity) {
    this.capacity = capacity;
  }

  void add(T sample) {
    synchronized (samples) {
      if (samples.size() == capacity) {
        samples.removeFirst();
      }
      samples.addLast(sample);
    }
  }

  int size() {
    synchronized (samples) {
      return samples.size();
    }
  }

  /** The samples now, oldest first. */
  List<T> snapshot() {
    synchronized (samples) {
      return new ArrayList<>(samples);
    }
  }

  /**
   * Every sample whose wait ({@code waitNanos}, ending at {@code endNanos}) lasted at least {@code
   * atLeastNanos}, as a stall, in order.
   */
  List<MachineProbe.Stall> stalls(
      ToLongFunction<T> endNanos, ToLongFunction<T> waitNanos, long atLeastNanos) {
    List<MachineProbe.Stall> stalls = new ArrayList<>();
    for (T sample : snapshot()) {
      long wait = waitNanos.applyAsLong(sample);
      if (wait >= atLeastNanos) {
        stalls.add(new MachineProbe.Stall(endNanos.applyAsLong(sample), wait / 1_000_000));
      }
    }
    return stalls;
  }
}
