package io.kvs.bench.engine;

import io.kvs.bench.DiskUsage;
import io.kvs.bench.Quiescence;
import io.kvs.bench.ResourceUsage;
import io.kvs.tools.JsonLine;
import io.kvs.tools.Latencies;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one system did in one workload phase on one KV size mix.
 *
 * @param system the system's name
 * @param mix the KV size mix
 * @param workload the workload
 * @param offeredOpsPerSec an open-loop phase's rate (its share of the peak); 0 for a closed loop
 * @param threads client threads
 * @param operations operations completed in the measured phase
 * @param nanos wall time of the phase, first operation to last
 * @param truncated whether the phase stopped at its time limit before all its operations
 * @param kvBytes KV bytes the operations moved: key + value bytes of every put (insert, update) and
 *     of every pair returned by a read or scan
 * @param usage CPU time and device bytes of the whole process from the phase's first operation
 *     until the background work it caused was done (the drain)
 * @param windowUsage the same, from the first operation to the last only
 * @param drain how long background work went on after the last operation
 * @param disk the system's files after the phase
 * @param liveKvBytes key + value bytes of the live records after the phase
 * @param records live records after the phase
 * @param notFound reads that found no value (0 unless something is wrong)
 * @param scanPairs pairs returned by scans
 * @param latencies latency histograms per operation type; in an open loop, from each operation's
 *     intended start
 * @param engineStats the system's own counters after the phase
 */
public record PhaseResult(
    String system,
    KvMix mix,
    Workload workload,
    double offeredOpsPerSec,
    int threads,
    long operations,
    long nanos,
    boolean truncated,
    long kvBytes,
    ResourceUsage usage,
    ResourceUsage windowUsage,
    Quiescence.Result drain,
    DiskUsage.Usage disk,
    long liveKvBytes,
    long records,
    long notFound,
    long scanPairs,
    Latencies<Operation> latencies,
    JsonLine engineStats)
    implements PhaseRow {

  @Override
  public Latencies.Summary latency() {
    return latencies.overall();
  }

  /** Operations per second of the phase. */
  public double opsPerSec() {
    return nanos == 0 ? 0 : operations * 1e9 / nanos;
  }

  /**
   * Process CPU time per operation, in microseconds, including the background work the phase
   * caused.
   */
  public double cpuMicrosPerOp() {
    return cpuMicrosPerOp(usage);
  }

  /**
   * Device bytes read and written per KV byte the operations moved, including the background work
   * the phase caused.
   */
  public double ioAmplification() {
    return ioAmplification(usage);
  }

  private double cpuMicrosPerOp(ResourceUsage consumed) {
    return operations == 0 ? Double.NaN : consumed.cpuNanos() / 1e3 / operations;
  }

  private double ioAmplification(ResourceUsage consumed) {
    return kvBytes == 0 ? Double.NaN : (double) consumed.deviceBytes() / kvBytes;
  }

  /** Bytes allocated on the device by the system's files per live KV byte. */
  public double spaceAmplification() {
    return liveKvBytes == 0 ? Double.NaN : (double) disk.allocatedBytes() / liveKvBytes;
  }

  /** The result as one JSON line, with the benchmark's fixed field names first. */
  public JsonLine toJson() {
    Latencies.Summary overall = latencies.overall();
    Map<String, Object> byOperation = new LinkedHashMap<>();
    latencies.byType().forEach((type, summary) -> byOperation.put(type, summary.toJson()));
    return new JsonLine()
        .put("system", system)
        .put("mix", mix.name())
        .put("workload", workload.id())
        .put("load_fraction", workload.openLoopFraction())
        .put("offered_ops_per_sec", offeredOpsPerSec)
        .put("max_us", overall.maxMicros())
        .put("ops_per_sec", opsPerSec())
        .put("cpu_us_per_op", cpuMicrosPerOp())
        .put("io_amplification", ioAmplification())
        .put("space_amplification", spaceAmplification())
        .put("p50_us", overall.p50Micros())
        .put("p99_us", overall.p99Micros())
        .put("p999_us", overall.p999Micros())
        .put("operations", operations)
        .put("seconds", nanos / 1e9)
        .put("truncated", truncated)
        .put("threads", threads)
        .put("records", records)
        .put("kv_bytes", kvBytes)
        .put("device_read_bytes", usage.deviceReadBytes())
        .put("device_write_bytes", usage.deviceWriteBytes())
        .put("cpu_seconds", usage.cpuNanos() / 1e9)
        .put("drain_seconds", drain.busyNanos() / 1e9)
        .put("drain_timed_out", drain.timedOut())
        .put("cpu_us_per_op_window", cpuMicrosPerOp(windowUsage))
        .put("io_amplification_window", ioAmplification(windowUsage))
        .put("disk_allocated_bytes", disk.allocatedBytes())
        .put("disk_apparent_bytes", disk.apparentBytes())
        .put("live_kv_bytes", liveKvBytes)
        .put("not_found", notFound)
        .put("scan_pairs", scanPairs)
        .put("latency_by_op", byOperation)
        .put("foreign_cpu_share", usage.foreignCpuShare())
        .put("host_cores", ResourceUsage.cores())
        .put("engine", engineStats);
  }
}
