#include "service/request_metrics.h"

#include "wire/messages.h"

namespace kvs::service {

namespace {

// Hands each thread the next shard, round robin, the first time it counts.
std::atomic<size_t> next_shard{0};

}  // namespace

RequestMetrics::Shard& RequestMetrics::ThisThreadsShard() {
  thread_local const size_t shard =
      next_shard.fetch_add(1, std::memory_order_relaxed) % kShards;
  return shards_[shard];
}

void RequestMetrics::RecordReply(std::string_view reply, int64_t begin) {
  if (begin == 0) return;  // metrics were off when the request began
  size_t operation = 0;
  size_t status = KVS_INTERNAL;
  if (reply.size() >= wire::kReplyHeaderBytes) {
    operation = static_cast<uint8_t>(reply[1]);
    status = static_cast<uint8_t>(reply[2]);
  }
  Record(operation, status, NowNanos() - begin);
}

void RequestMetrics::Record(size_t operation, size_t status,
                            int64_t latency_ns) {
  if (!enabled()) return;
  // Unknown values are counted as noop or INTERNAL, never outside.
  if (operation >= kOperations) operation = 0;
  if (status >= kStatuses) status = KVS_INTERNAL;
  Shard& shard = ThisThreadsShard();
  shard.counts[operation * kStatuses + status].fetch_add(
      1, std::memory_order_relaxed);
  shard.buckets[operation * kLatencyBuckets + BucketOf(latency_ns)].fetch_add(
      1, std::memory_order_relaxed);
  shard.latency_sum_ns[operation].fetch_add(
      latency_ns > 0 ? static_cast<uint64_t>(latency_ns) : 0,
      std::memory_order_relaxed);
}

void RequestMetrics::Snapshot(std::vector<uint64_t>* values) const {
  values->assign(kSnapshotValues, 0);
  uint64_t* counts = values->data();
  uint64_t* buckets = counts + kOperations * kStatuses;
  uint64_t* sums = buckets + kOperations * kLatencyBuckets;
  for (const Shard& shard : shards_) {
    for (size_t i = 0; i < shard.counts.size(); ++i) {
      counts[i] += shard.counts[i].load(std::memory_order_relaxed);
    }
    for (size_t i = 0; i < shard.buckets.size(); ++i) {
      buckets[i] += shard.buckets[i].load(std::memory_order_relaxed);
    }
    for (size_t i = 0; i < shard.latency_sum_ns.size(); ++i) {
      sums[i] += shard.latency_sum_ns[i].load(std::memory_order_relaxed);
    }
  }
}

}  // namespace kvs::service
