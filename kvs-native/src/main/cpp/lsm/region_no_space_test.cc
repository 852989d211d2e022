// A full device is an error, never the end of a region: writes fail with a
// NoSpace IO_ERROR and change nothing, reads keep working, compactions that
// find no space are tried again, and writing resumes once space exists.
// Both ways a device can be full are injected: growth refused (fallocate on
// a full file system) and writes refused.

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "lsm/region.h"
#include "testing/region_harness.h"
#include "util/limits.h"

namespace kvs::lsm {
namespace {

using testing::MemoryDevice;
using testing::RegionHarness;

constexpr uint64_t kSegment = limits::segment_size_bytes;

RegionOptions SmallL0() {
  RegionOptions options;
  options.l0_size_bytes = 1 << 20;  // compactions run, and can find no space
  options.stall_timeout_ms =
      30'000;  // a slow (sanitized) compaction is no full disk
  return options;
}

// Writes keys over a mix of small, medium and large values, remembering
// what was acknowledged.
class Writer {
 public:
  Writer(RegionHarness* harness, uint64_t keys)
      : harness_(harness), keys_(keys) {}

  Status Next() {
    const std::string key = "key" + std::to_string(random_() % keys_);
    static constexpr size_t kSizes[] = {20, 200, 2000};
    std::string value(kSizes[random_() % 3], '\0');
    for (char& byte : value) byte = static_cast<char>('a' + random_() % 26);
    Status status;
    if (random_() % 10 == 0) {
      status = harness_->region()->Delete(key);
      if (status.ok()) acknowledged_.erase(key), deleted_[key] = true;
    } else {
      status = harness_->region()->Put(key, value);
      if (status.ok()) acknowledged_[key] = value, deleted_.erase(key);
    }
    if (!status.ok()) failed_[key] = true;
    return status;
  }

  // Every acknowledged write reads back, unless a later failed write on
  // the same key may have taken effect (a failed write's outcome is
  // unknown).
  void ExpectAcknowledged() const {
    for (const auto& [key, value] : acknowledged_) {
      if (failed_.count(key)) continue;
      ASSERT_EQ(harness_->GetOrStatus(key), value) << key;
    }
    for (const auto& [key, deleted] : deleted_) {
      if (failed_.count(key)) continue;
      ASSERT_EQ(harness_->GetOrStatus(key).rfind("NOT_FOUND", 0), 0u) << key;
    }
  }

  size_t acknowledged() const { return acknowledged_.size(); }

 private:
  RegionHarness* const harness_;
  const uint64_t keys_;
  std::mt19937_64 random_{42};
  std::map<std::string, std::string> acknowledged_;
  std::map<std::string, bool> deleted_;
  std::map<std::string, bool> failed_;
};

void ExpectNoSpace(const Status& status) {
  EXPECT_EQ(status.code(), Status::Code::kIoError) << status.ToString();
  EXPECT_TRUE(status.IsNoSpace()) << status.ToString();
}

TEST(RegionNoSpaceTest, AVolumeThatCannotGrowFailsWritesUntilSpaceExists) {
  RegionHarness harness(24 * kSegment, SmallL0());
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  // About 70 MiB of live pairs: more than the device holds.
  Writer writer(&harness, 100'000);
  Status status;
  int writes = 0;
  while ((status = writer.Next()).ok()) {
    ASSERT_LT(++writes, 200'000) << "the device never filled up";
  }
  ExpectNoSpace(status);
  EXPECT_NE(status.message().find("No space left on device"),
            std::string_view::npos)
      << status.ToString();
  // Writing on: every write fails cleanly, nothing stops for good, and
  // everything acknowledged still reads.
  for (int i = 0; i < 300; ++i) {
    const Status refused = writer.Next();
    if (!refused.ok()) ExpectNoSpace(refused);
  }
  writer.ExpectAcknowledged();
  // A restart on the full device: opening writes nothing, and the logs'
  // tails (a segment may have its end record but no successor) read back.
  ASSERT_TRUE(harness.region()->Sync().ok());
  harness.CrashAndReopen(MemoryDevice::CrashMode::kDropUnsynced);
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  writer.ExpectAcknowledged();
  // Full still, unless a compaction freed space before the crash.
  const Status after_restart = writer.Next();
  if (!after_restart.ok()) ExpectNoSpace(after_restart);
  // Space appears (another file on the file system was deleted): writes
  // resume, compactions catch up, and nothing acknowledged is lost across
  // a crash.
  harness.device()->SetCapacity(256 * kSegment);
  for (int i = 0; i < 5000; ++i) {
    const Status resumed = writer.Next();
    ASSERT_TRUE(resumed.ok()) << "write " << i << ": " << resumed.ToString();
  }
  ASSERT_TRUE(harness.region()->Sync().ok());
  harness.region()->WaitForCompactions();
  EXPECT_GT(harness.region()->stats().compactions, 0u);
  harness.CrashAndReopen(MemoryDevice::CrashMode::kDropUnsynced);
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  EXPECT_EQ(harness.region()->stats().recovery.dropped_writes, 0u);
  writer.ExpectAcknowledged();
}

TEST(RegionNoSpaceTest, RefusedWritesKeepTheirBytesBufferedUntilTheyFit) {
  RegionHarness harness(256 * kSegment, SmallL0());
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  Writer writer(&harness, 3000);
  for (int i = 0; i < 3000; ++i) {
    ASSERT_TRUE(writer.Next().ok());
  }
  harness.device()->RefuseWritesForNoSpace(true);
  // Writes are taken while the log buffers have room, then refused; a
  // sync, which must write, is refused too; compactions fail and wait.
  int refused = 0;
  for (int i = 0; i < 3000; ++i) {
    const Status status = writer.Next();
    if (!status.ok()) {
      ExpectNoSpace(status);
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
  ExpectNoSpace(harness.region()->Sync());
  // A full device is no reason to hand the region over.
  EXPECT_TRUE(harness.region()->StoppedBy().ok())
      << harness.region()->StoppedBy().ToString();
  writer.ExpectAcknowledged();
  harness.device()->RefuseWritesForNoSpace(false);
  ASSERT_TRUE(harness.region()->Sync().ok());
  for (int i = 0; i < 3000; ++i) {
    const Status status = writer.Next();
    ASSERT_TRUE(status.ok()) << "write " << i << ": " << status.ToString();
  }
  ASSERT_TRUE(harness.region()->Sync().ok());
  harness.CrashAndReopen(MemoryDevice::CrashMode::kDropUnsynced);
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  EXPECT_EQ(harness.region()->stats().recovery.dropped_writes, 0u);
  writer.ExpectAcknowledged();
}

// An I/O error (EIO) is different: whatever it hits first (a log's write or
// a compaction's), the region stops for good, refuses writes, and says why
// -- its server hands it over (HostedRegions).
TEST(RegionNoSpaceTest, AnIoErrorStopsTheRegionForGoodAndSaysWhy) {
  RegionHarness harness(256 * kSegment, SmallL0());
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  Writer writer(&harness, 3000);
  for (int i = 0; i < 3000; ++i) {
    ASSERT_TRUE(writer.Next().ok());
  }
  EXPECT_TRUE(harness.region()->StoppedBy().ok());
  harness.device()->FailWritesAfter(0);
  Status failed;
  for (int i = 0; i < 200'000 && failed.ok(); ++i) {
    failed = writer.Next();
    if (failed.ok() && i % 1000 == 999) failed = harness.region()->Sync();
  }
  ASSERT_FALSE(failed.ok()) << "no write failed after the device did";
  EXPECT_FALSE(failed.IsNoSpace()) << failed.ToString();
  const Status stopped = harness.region()->StoppedBy();
  ASSERT_FALSE(stopped.ok());
  EXPECT_NE(stopped.message().find("stopped"), std::string_view::npos)
      << stopped.ToString();
  // For good: the device works again, the region does not (a stopped
  // compaction refuses writes once L0 is full, a stopped log at once).
  harness.device()->FailWritesAfter(std::nullopt);
  Status after;
  for (int i = 0; i < 200'000 && after.ok(); ++i) after = writer.Next();
  EXPECT_FALSE(after.ok());
  EXPECT_EQ(harness.region()->StoppedBy().ToString(), stopped.ToString());
}

}  // namespace
}  // namespace kvs::lsm
