// Runs one workload phase of the native engine benchmark against one system
// with a fixed number of client threads (closed loop), and measures it as
// the JVM benchmark's WorkloadRunner does: operations per second from the
// first operation to the last; CPU time and device bytes of the whole
// process (client threads and the system's background threads) until the
// background work the phase caused is done (the drain); latency
// percentiles per operation type.

#ifndef KVS_TOOLS_ENGINE_BENCH_RUNNER_H_
#define KVS_TOOLS_ENGINE_BENCH_RUNNER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "tools/engine_bench/systems.h"
#include "tools/engine_bench/workload.h"
#include "util/histogram.h"
#include "util/status.h"

namespace kvs::bench {

// The records of one mix and what each holds now. Thread-safe.
class Dataset {
 public:
  // `capacity`: every record the run may insert (loaded plus inserted by
  // the runs).
  Dataset(Mix mix, uint64_t seed, uint64_t capacity);

  const Mix& mix() const { return mix_; }
  uint64_t seed() const { return seed_; }
  // The next record number to insert; InvalidArgument past the capacity.
  Status ClaimInsert(uint64_t* number);
  // Record `number` now holds a pair of `size_class`.
  void Written(uint64_t number, SizeClass size_class);
  // Records 0..n-1 all written (acknowledged inserts without a gap).
  uint64_t Existing();
  // Key + value bytes of every record written.
  uint64_t LiveKvBytes() const;

 private:
  const Mix mix_;
  const uint64_t seed_;
  const uint64_t capacity_;
  // Per record: 0 not written yet, else its size class + 1.
  std::unique_ptr<std::atomic<uint8_t>[]> classes_;
  std::atomic<uint64_t> next_insert_{0};
  std::atomic<uint64_t> existing_{0};
};

struct RunSettings {
  unsigned threads = 4;
  uint64_t seed = 20240229;
  // The drain: the process counts as done with the phase's background work
  // once it did under 256 KiB of device I/O and used under 15 % of a core
  // per 200 ms poll for this long, or after the limit.
  // 0: no drain.
  uint64_t quiet_ms = 1000;
  uint64_t drain_limit_ms = 600'000;
  // A phase stops after this long even if operations remain (a guard; the
  // result says so).
  uint64_t phase_limit_ms = 1'800'000;
};

struct OperationSummary {
  uint64_t count = 0;
  LatencyHistogram latencies;
};

struct PhaseResult {
  std::string system;
  std::string mix;
  std::string workload;
  unsigned threads = 0;
  uint64_t operations = 0;
  uint64_t nanos = 0;      // first operation to last
  bool truncated = false;  // stopped at the phase limit
  uint64_t kv_bytes = 0;
  uint64_t not_found = 0;
  uint64_t scan_pairs = 0;
  uint64_t cpu_nanos = 0;  // until drained
  uint64_t device_read_bytes = 0;
  uint64_t device_write_bytes = 0;
  uint64_t window_cpu_nanos = 0;  // first operation to last
  uint64_t window_device_bytes = 0;
  uint64_t drain_nanos = 0;
  bool drain_timed_out = false;
  uint64_t disk_allocated_bytes = 0;
  uint64_t disk_apparent_bytes = 0;
  uint64_t live_kv_bytes = 0;
  uint64_t records = 0;
  LatencyHistogram all;
  LatencyHistogram by_operation[kOperationKinds];
  std::string engine_stats_json;

  double OpsPerSec() const;
  double CpuMicrosPerOp() const;
  double IoAmplification() const;
  double SpaceAmplification() const;
  // One JSON line with the JVM benchmark's field names (PhaseResult.toJson)
  // plus "api":"native".
  std::string ToJson() const;
};

// Runs `operations` operations of `workload` (Load A: inserts that many
// records) on `system` over `dataset`, then drains. `directory` holds the
// system's files (measured for space). The first failed operation ends the
// phase with its status.
Status RunPhase(const std::string& system_name, BenchSystem* system,
                const std::string& directory, Dataset* dataset,
                const Workload& workload, uint64_t operations,
                const RunSettings& settings, PhaseResult* result);

}  // namespace kvs::bench

#endif  // KVS_TOOLS_ENGINE_BENCH_RUNNER_H_
