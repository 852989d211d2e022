package io.kvs.bench.engine;

import io.kvs.tools.Latencies;

/**
 * What the engine benchmark's table and chart show of one phase, whether the JVM ran it ({@link
 * PhaseResult}) or the native benchmark did ({@link NativePhase}).
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
}
