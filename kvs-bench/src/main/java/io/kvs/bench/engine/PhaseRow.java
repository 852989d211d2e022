package io.kvs.bench.engine;

import io.kvs.tools.Latencies;

/**
 * What the engine benchmark's table and chart show of one phase, whether the JVM ran it ({@link
 * PhaseResult}) or the native benchmark did ({@link PhaseLine}).
 */
public interface PhaseRow {
  /** The system's name; native runs end in {@code -native}. */
  String system();

  KvMix mix();

  Workload workload();

  /** Whether the phase stopped at its time limit before all its operations. */
  boolean truncated();

  double opsPerSec();

  double cpuMicrosPerOp();

  double ioAmplification();

  double spaceAmplification();

  /** Latency percentiles over every operation of the phase. */
  Latencies.Summary latency();

  /** Rounds the figures are the medians of (1: one run). */
  default int rounds() {
    return 1;
  }

  /** The slowest round's throughput. */
  default double opsPerSecMin() {
    return opsPerSec();
  }

  /** The fastest round's throughput. */
  default double opsPerSecMax() {
    return opsPerSec();
  }
}
