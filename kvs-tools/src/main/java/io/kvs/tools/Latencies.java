package io.kvs.tools;

import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * Latency histograms (HdrHistogram, 3 significant digits, nanoseconds up to one minute) per
 * operation type. Not thread-safe: each client thread records into its own instance, and the
 * instances are merged with {@link #add(Latencies)} once the threads are done.
 *
 * @param <E> the operation types
 */
public final class Latencies<E extends Enum<E>> {
  private static final long HIGHEST_NANOS = TimeUnit.MINUTES.toNanos(1);

  private final E[] types;
  private final Histogram[] byType;
  private final Histogram all = newHistogram();

  /** An empty set of histograms for every constant of {@code type}. */
  public Latencies(Class<E> type) {
    this.types = type.getEnumConstants();
    this.byType = new Histogram[types.length];
    for (int i = 0; i < types.length; i++) {
      byType[i] = newHistogram();
    }
  }

  /** Records one operation of {@code type} that took {@code nanos} (clamped to one minute). */
  public void record(E type, long nanos) {
    long value = Math.max(1, Math.min(nanos, HIGHEST_NANOS));
    byType[type.ordinal()].recordValue(value);
    all.recordValue(value);
  }

  /** Adds every value recorded by {@code other}. */
  public void add(Latencies<E> other) {
    for (int i = 0; i < byType.length; i++) {
      byType[i].add(other.byType[i]);
    }
    all.add(other.all);
  }

  /** Percentiles over every operation type together. */
  public Summary overall() {
    return Summary.of(all);
  }

  /** Percentiles of one operation type. */
  public Summary of(E type) {
    return Summary.of(byType[type.ordinal()]);
  }

  /** Percentiles of every type that recorded anything, keyed by the lower-case type name. */
  public Map<String, Summary> byType() {
    Map<String, Summary> summaries = new TreeMap<>();
    for (E type : types) {
      Histogram histogram = byType[type.ordinal()];
      if (histogram.getTotalCount() > 0) {
        summaries.put(type.name().toLowerCase(Locale.ROOT), Summary.of(histogram));
      }
    }
    return summaries;
  }

  private static Histogram newHistogram() {
    return new Histogram(HIGHEST_NANOS, 3);
  }

  /**
   * Latency percentiles in microseconds.
   *
   * @param count operations recorded
   */
  public record Summary(
      long count, double p50Micros, double p99Micros, double p999Micros, double maxMicros) {
    static Summary of(Histogram histogram) {
      if (histogram.getTotalCount() == 0) {
        return new Summary(0, 0, 0, 0, 0);
      }
      return new Summary(
          histogram.getTotalCount(),
          histogram.getValueAtPercentile(50) / 1e3,
          histogram.getValueAtPercentile(99) / 1e3,
          histogram.getValueAtPercentile(99.9) / 1e3,
          histogram.getMaxValue() / 1e3);
    }

    /** The summary as a JSON object. */
    public JsonLine toJson() {
      return new JsonLine()
          .put("count", count)
          .put("p50_us", p50Micros)
          .put("p99_us", p99Micros)
          .put("p999_us", p999Micros)
          .put("max_us", maxMicros);
    }
  }
}
