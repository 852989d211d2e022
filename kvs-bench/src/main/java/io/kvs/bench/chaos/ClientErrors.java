package io.kvs.bench.chaos;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the load's clients were told when an operation failed: each distinct message with how often
 * and when (first and last time), so that a long unavailability can be explained by what the
 * clients saw meanwhile. Bounded: at most {@link #DISTINCT_MAX} distinct messages are kept (the
 * messages name regions, servers and epochs, so a long run makes many); later new ones are counted
 * as dropped. Thread-safe.
 */
final class ClientErrors {
  static final int DISTINCT_MAX = 4_096;
  private static final int MESSAGE_CHARS_MAX = 300;

  /** One distinct message: how often, and the first and last time (System.nanoTime). */
  record Seen(String message, long count, long firstNanos, long lastNanos) {}

  private final Map<String, Seen> seen = new LinkedHashMap<>();
  private long dropped;

  /** Records that an operation failed with {@code error} now. */
  void record(Throwable error) {
    String message = error.getClass().getSimpleName() + ": " + error.getMessage();
    if (message.length() > MESSAGE_CHARS_MAX) {
      message = message.substring(0, MESSAGE_CHARS_MAX) + "...";
    }
    long now = System.nanoTime();
    synchronized (this) {
      Seen before = seen.get(message);
      if (before != null) {
        seen.put(message, new Seen(message, before.count() + 1, before.firstNanos(), now));
      } else if (seen.size() < DISTINCT_MAX) {
        seen.put(message, new Seen(message, 1, now, now));
      } else {
        dropped++;
      }
    }
  }

  /**
   * The messages seen at some time from {@code fromNanos} to {@code toNanos}, most frequent first.
   */
  synchronized List<Seen> during(long fromNanos, long toNanos) {
    List<Seen> overlapping = new ArrayList<>();
    for (Seen one : seen.values()) {
      if (one.lastNanos() >= fromNanos && one.firstNanos() <= toNanos) {
        overlapping.add(one);
      }
    }
    overlapping.sort((a, b) -> Long.compare(b.count(), a.count()));
    return overlapping;
  }

  /** Failures not kept because {@link #DISTINCT_MAX} distinct messages were already kept. */
  synchronized long dropped() {
    return dropped;
  }
}
