// Atomic batches (Region::WriteBatch): applied all or nothing, refused
// whole when invalid, and kept whole or not at all by recovery, even when
// their records lie in both logs and only some reached the device.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lsm/region.h"
#include "testing/region_harness.h"
#include "util/limits.h"

namespace kvs::lsm {
namespace {

using testing::MemoryDevice;
using testing::RegionHarness;

constexpr uint64_t kCapacityBytes = 256 * limits::segment_size_bytes;

std::string LargeValue(int i) {
  return std::string(2000, static_cast<char>('a' + i % 26));
}

std::string Key(const char* prefix, int i) {
  return prefix + std::to_string(10000 + i);
}

bool IsNotFound(const std::string& got) {
  return got.rfind("NOT_FOUND", 0) == 0;
}

TEST(RegionBatchTest, ABatchAcrossBothLogsIsAppliedWholeAndSurvivesAReopen) {
  RegionHarness harness(kCapacityBytes, {});
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  ASSERT_TRUE(harness.region()->Put("gone", "soon").ok());
  const std::string large = LargeValue(3);
  const std::vector<Region::BatchWrite> batch = {
      {true, "small", "v1"},
      {true, "large", large},
      {false, "gone", {}},
      {true, "small", "v2"},  // a later write of a key wins
  };
  const uint64_t before = harness.region()->last_lsn();
  ASSERT_TRUE(harness.region()->WriteBatch(batch).ok());
  EXPECT_EQ(harness.region()->last_lsn(), before + batch.size());
  EXPECT_EQ(harness.GetOrStatus("small"), "v2");
  EXPECT_EQ(harness.GetOrStatus("large"), large);
  EXPECT_TRUE(IsNotFound(harness.GetOrStatus("gone")));

  ASSERT_TRUE(harness.region()->Sync().ok());
  harness.CrashAndReopen(MemoryDevice::CrashMode::kProcessKill);
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  EXPECT_EQ(harness.GetOrStatus("small"), "v2");
  EXPECT_EQ(harness.GetOrStatus("large"), large);
  EXPECT_TRUE(IsNotFound(harness.GetOrStatus("gone")));
  EXPECT_EQ(harness.region()->stats().recovery.dropped_writes, 0u);
}

TEST(RegionBatchTest, AnInvalidBatchWritesNothing) {
  RegionHarness harness(kCapacityBytes, {});
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  Region* region = harness.region();
  const uint64_t before = region->last_lsn();
  EXPECT_EQ(region->WriteBatch({}).code(), Status::Code::kInvalidArgument);
  // The bad write comes last: the good ones before it are not applied.
  EXPECT_EQ(region->WriteBatch({{true, "a", "1"}, {true, "", "2"}}).code(),
            Status::Code::kInvalidArgument);
  const std::string key_too_long(limits::key_size_bytes_max + 1, 'k');
  EXPECT_EQ(
      region->WriteBatch({{true, "a", "1"}, {true, key_too_long, "2"}}).code(),
      Status::Code::kTooLarge);
  std::vector<Region::BatchWrite> many(limits::batch_writes_max + 1,
                                       {true, "a", "1"});
  EXPECT_EQ(region->WriteBatch(many).code(), Status::Code::kTooLarge);
  const std::string half(limits::value_size_bytes_max / 2 + 8, 'v');
  EXPECT_EQ(region
                ->WriteBatch(
                    {{true, "a", half}, {true, "b", half}, {true, "c", half}})
                .code(),
            Status::Code::kTooLarge);
  EXPECT_EQ(region->last_lsn(), before);
  EXPECT_TRUE(IsNotFound(harness.GetOrStatus("a")));
  // At the limits: the most writes, and the most bytes.
  std::vector<Region::BatchWrite> most;
  std::vector<std::string> keys;
  for (size_t i = 0; i < limits::batch_writes_max; ++i) {
    keys.push_back(Key("most", static_cast<int>(i)));
  }
  for (const std::string& key : keys) most.push_back({true, key, "x"});
  EXPECT_TRUE(region->WriteBatch(most).ok());
  const std::string biggest(limits::value_size_bytes_max, 'b');
  const std::string longest(limits::key_size_bytes_max, 'k');
  EXPECT_TRUE(region->WriteBatch({{true, longest, biggest}}).ok());
  EXPECT_EQ(harness.GetOrStatus(longest), biggest);
}

// The batch's large records come first and fill the large log's buffer, so
// they reach the device; its last records stay in the write-ahead log's
// buffer and die with the process. Without the batch rule, recovery would
// keep the large records (their LSNs follow the last kept write with no
// gap): half a batch.
TEST(RegionBatchTest, ABatchWhoseLastRecordsWereLostIsDroppedWhole) {
  RegionHarness harness(kCapacityBytes, {});
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  ASSERT_TRUE(harness.region()->Put("before", "kept").ok());
  ASSERT_TRUE(harness.region()->Sync().ok());
  constexpr int kLarge = 300;
  std::vector<std::string> keys;
  std::vector<std::string> values;
  for (int i = 0; i < kLarge; ++i) {
    keys.push_back(Key("big", i));
    values.push_back(LargeValue(i));
  }
  std::vector<Region::BatchWrite> batch;
  for (int i = 0; i < kLarge; ++i) batch.push_back({true, keys[i], values[i]});
  batch.push_back({true, "last-small", "lost with the buffer"});
  ASSERT_TRUE(harness.region()->WriteBatch(batch).ok());
  harness.CrashAndReopen(MemoryDevice::CrashMode::kProcessKill);
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  EXPECT_EQ(harness.GetOrStatus("before"), "kept");
  EXPECT_TRUE(IsNotFound(harness.GetOrStatus("last-small")));
  for (int i = 0; i < kLarge; ++i) {
    ASSERT_TRUE(IsNotFound(harness.GetOrStatus(keys[i])))
        << "large write " << i << " of a batch whose last write was lost";
  }
  const RecoveryReport report = harness.region()->stats().recovery;
  EXPECT_EQ(report.cut_lsn, 2u);           // the batch's first LSN
  EXPECT_EQ(report.replayed_writes, 1u);   // "before"
  EXPECT_GE(report.dropped_writes, 100u);  // what reached the device

  // The region goes on from before the batch; its records never return.
  ASSERT_TRUE(harness.region()->Put("after", "new").ok());
  ASSERT_TRUE(harness.region()->Sync().ok());
  harness.CrashAndReopen(MemoryDevice::CrashMode::kProcessKill);
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  EXPECT_EQ(harness.GetOrStatus("after"), "new");
  EXPECT_EQ(harness.GetOrStatus("before"), "kept");
  for (int i = 0; i < kLarge; ++i) {
    ASSERT_TRUE(IsNotFound(harness.GetOrStatus(keys[i]))) << i;
  }
  EXPECT_EQ(harness.region()->stats().recovery.dropped_writes, 0u);
}

// A log that fails part-way through a batch (an I/O error once some of its
// records were appended) leaves them unacknowledged, and the region takes
// no write after: a later LSN would make recovery take the partial batch
// for a whole one. Reopened, the region has dropped the batch.
TEST(RegionBatchTest, ABatchThatFailsPartWayStopsTheRegionsWrites) {
  RegionHarness harness(kCapacityBytes, {});
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  ASSERT_TRUE(harness.region()->Put("before", "kept").ok());
  ASSERT_TRUE(harness.region()->Sync().ok());
  std::vector<std::string> keys, values;
  std::vector<Region::BatchWrite> batch;
  for (int i = 0; i < 300; ++i) {
    keys.push_back(Key("big", i));
    values.push_back(LargeValue(i));
  }
  for (int i = 0; i < 300; ++i) batch.push_back({true, keys[i], values[i]});
  // The large log's first full chunk (256 KiB) fails to reach the device.
  harness.device()->FailWritesAfter(harness.device()->written_bytes() +
                                    (64 << 10));
  const Status failed = harness.region()->WriteBatch(batch);
  ASSERT_FALSE(failed.ok());
  harness.device()->FailWritesAfter(std::nullopt);
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(IsNotFound(harness.GetOrStatus(keys[i]))) << i;
  }
  const Status after = harness.region()->Put("after", "refused");
  EXPECT_FALSE(after.ok());
  EXPECT_NE(after.message().find("takes no writes"), std::string_view::npos)
      << after.ToString();
  EXPECT_FALSE(harness.region()->WriteBatch({{true, "after", "x"}}).ok());

  harness.CrashAndReopen(MemoryDevice::CrashMode::kProcessKill);
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  EXPECT_EQ(harness.GetOrStatus("before"), "kept");
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(IsNotFound(harness.GetOrStatus(keys[i]))) << i;
  }
  ASSERT_TRUE(harness.region()->Put("after", "taken").ok());
  EXPECT_EQ(harness.GetOrStatus("after"), "taken");
}

}  // namespace
}  // namespace kvs::lsm
