// RequestMetrics: what a region service answered, for monitoring -- a
// count per operation and reply status, and a latency histogram per
// operation with fixed power-of-two buckets. Read by the Java control plane
// as one snapshot (kvs_service_request_stats) on a schedule: nothing calls
// into Java and nothing here takes a lock.
//
// Cost on the request path: one steady-clock read when a request enters
// the service and one when it is answered, and three relaxed increments on
// counters of the calling thread's shard. Shards (one cache line apart,
// picked once per thread) keep the workers, the replication thread and the
// Netty threads from bouncing one line between cores.
//
// Latency is service time: from the request entering the service to its
// reply (a replicated write's wait for its backups included), not the
// transport's queueing before.
//
// Thread safety: Record and Snapshot may run on any threads at once; a
// snapshot taken meanwhile may hold some of a request's counters and not
// others (each counter only grows).

#ifndef KVS_SERVICE_REQUEST_METRICS_H_
#define KVS_SERVICE_REQUEST_METRICS_H_

#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "kvs/kvs.h"

namespace kvs::service {

class RequestMetrics {
 public:
  static constexpr size_t kOperations = KVS_REQUEST_OPERATIONS;
  static constexpr size_t kStatuses = KVS_REQUEST_STATUSES;
  static constexpr size_t kLatencyBuckets = KVS_REQUEST_LATENCY_BUCKETS;
  // The snapshot's layout (kvs.h): counts [operation][status], then
  // latency buckets [operation][bucket], then latency sums in nanoseconds
  // [operation].
  static constexpr size_t kSnapshotValues =
      kOperations * (kStatuses + kLatencyBuckets + 1);
  // Threads map onto this many shards; more threads share them (still
  // correct: the increments are atomic).
  static constexpr size_t kShards = 8;

  // Whether requests are counted (default: yes). Off, Begin returns 0 and
  // Record does nothing: the switch the metrics' cost is measured with.
  void SetEnabled(bool enabled) {
    enabled_.store(enabled, std::memory_order_relaxed);
  }
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }

  // A request entered the service: the time to pass to Record, or 0 when
  // metrics are off.
  int64_t Begin() const { return enabled() ? NowNanos() : 0; }

  // Counts the answer `reply` (an encoded wire reply: its header names the
  // operation and status) to a request that began at `begin` (Begin). A
  // reply shorter than its header counts as an INTERNAL noop; an operation
  // or status past the known ones counts as noop or INTERNAL.
  void RecordReply(std::string_view reply, int64_t begin);
  void Record(size_t operation, size_t status, int64_t latency_ns);

  // The sums over every shard, kSnapshotValues of them in the layout above.
  void Snapshot(std::vector<uint64_t>* values) const;

  // The bucket of a latency: 0 below 1 us, b in [2^(b-1), 2^b) us, the
  // last one anything longer.
  static size_t BucketOf(int64_t latency_ns) {
    const uint64_t micros =
        latency_ns <= 0 ? 0 : static_cast<uint64_t>(latency_ns) / 1000;
    const size_t bucket = static_cast<size_t>(std::bit_width(micros));
    return bucket < kLatencyBuckets ? bucket : kLatencyBuckets - 1;
  }

  static int64_t NowNanos() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

 private:
  struct alignas(64) Shard {
    std::array<std::atomic<uint64_t>, kOperations * kStatuses> counts{};
    std::array<std::atomic<uint64_t>, kOperations * kLatencyBuckets> buckets{};
    std::array<std::atomic<uint64_t>, kOperations> latency_sum_ns{};
  };
  Shard& ThisThreadsShard();

  std::atomic<bool> enabled_{true};
  std::array<Shard, kShards> shards_{};
};

}  // namespace kvs::service

#endif  // KVS_SERVICE_REQUEST_METRICS_H_
