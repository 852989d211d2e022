#include "service/request_metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "wire/messages.h"

namespace kvs::service {
namespace {

constexpr size_t kCounts = 0;
constexpr size_t kBuckets =
    RequestMetrics::kOperations * RequestMetrics::kStatuses;
constexpr size_t kSums =
    kBuckets + RequestMetrics::kOperations * RequestMetrics::kLatencyBuckets;

size_t CountAt(size_t operation, size_t status) {
  return kCounts + operation * RequestMetrics::kStatuses + status;
}

size_t BucketAt(size_t operation, size_t bucket) {
  return kBuckets + operation * RequestMetrics::kLatencyBuckets + bucket;
}

TEST(RequestMetricsTest, BucketsArePowersOfTwoMicroseconds) {
  EXPECT_EQ(RequestMetrics::BucketOf(-5), 0u);
  EXPECT_EQ(RequestMetrics::BucketOf(999), 0u);
  EXPECT_EQ(RequestMetrics::BucketOf(1'000), 1u);
  EXPECT_EQ(RequestMetrics::BucketOf(1'999), 1u);
  EXPECT_EQ(RequestMetrics::BucketOf(2'000), 2u);
  EXPECT_EQ(RequestMetrics::BucketOf(3'999), 2u);
  EXPECT_EQ(RequestMetrics::BucketOf(4'000), 3u);
  EXPECT_EQ(RequestMetrics::BucketOf(int64_t{1} << 62),
            RequestMetrics::kLatencyBuckets - 1);
}

TEST(RequestMetricsTest, SnapshotSumsEveryThreadsCounts) {
  RequestMetrics metrics;
  constexpr int kThreads = 12;  // more than shards: some share one
  constexpr int kEach = 1000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&metrics] {
      for (int i = 0; i < kEach; ++i) {
        metrics.Record(static_cast<size_t>(wire::Opcode::kGet), KVS_OK, 1'500);
        metrics.Record(static_cast<size_t>(wire::Opcode::kPut), KVS_NOT_PRIMARY,
                       5'000);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::vector<uint64_t> values;
  metrics.Snapshot(&values);
  ASSERT_EQ(values.size(), RequestMetrics::kSnapshotValues);
  const uint64_t total = uint64_t{kThreads} * kEach;
  EXPECT_EQ(values[CountAt(2, KVS_OK)], total);
  EXPECT_EQ(values[CountAt(1, KVS_NOT_PRIMARY)], total);
  EXPECT_EQ(values[CountAt(1, KVS_OK)], 0u);
  EXPECT_EQ(values[BucketAt(2, 1)], total);  // 1.5 us
  EXPECT_EQ(values[BucketAt(1, 3)], total);  // 5 us
  EXPECT_EQ(values[kSums + 2], total * 1'500);
  EXPECT_EQ(values[kSums + 1], total * 5'000);
}

TEST(RequestMetricsTest, RepliesAreCountedByTheirHeader) {
  RequestMetrics metrics;
  wire::Reply reply;
  reply.opcode = wire::Opcode::kScan;
  reply.request_id = 7;
  std::string bytes;
  wire::EncodeReply(reply, &bytes);
  metrics.RecordReply(bytes, RequestMetrics::NowNanos());
  metrics.RecordReply("short", RequestMetrics::NowNanos());
  std::vector<uint64_t> values;
  metrics.Snapshot(&values);
  EXPECT_EQ(values[CountAt(4, KVS_OK)], 1u);
  EXPECT_EQ(values[CountAt(0, KVS_INTERNAL)], 1u);
}

TEST(RequestMetricsTest, OffCountsNothing) {
  RequestMetrics metrics;
  metrics.SetEnabled(false);
  EXPECT_EQ(metrics.Begin(), 0);
  metrics.Record(2, KVS_OK, 10);
  metrics.RecordReply("short", 123);
  std::vector<uint64_t> values;
  metrics.Snapshot(&values);
  for (const uint64_t value : values) EXPECT_EQ(value, 0u);
}

TEST(RequestMetricsTest, UnknownOperationsAndStatusesStayInBounds) {
  RequestMetrics metrics;
  metrics.Record(99, 250, 10);
  std::vector<uint64_t> values;
  metrics.Snapshot(&values);
  EXPECT_EQ(values[CountAt(0, KVS_INTERNAL)], 1u);
}

}  // namespace
}  // namespace kvs::service
