// Point-in-time recovery: a region whose two logs (write-ahead and large)
// reached the device to different points recovers to the first LSN missing
// from both, and what lay past it never comes back.

#include <gtest/gtest.h>

#include <string>

#include "log/log_format.h"
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

std::string BigKey(int i) { return "big" + std::to_string(10000 + i); }

TEST(RegionRecoveryTest, AKilledProcessRecoversToAPointInTimeAcrossBothLogs) {
  RegionHarness harness(kCapacityBytes, {});
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  // LSN 1 stays in the write-ahead log's buffer; the large puts after it
  // fill the large log's 256 KiB buffer, which goes to the device.
  ASSERT_TRUE(harness.region()->Put("first", "small").ok());
  constexpr int kLarge = 300;
  for (int i = 0; i < kLarge; ++i) {
    ASSERT_TRUE(harness.region()->Put(BigKey(i), LargeValue(i)).ok());
  }
  harness.CrashAndReopen(MemoryDevice::CrashMode::kProcessKill);
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  // Acknowledged after the lost write, so lost with it.
  EXPECT_EQ(harness.GetOrStatus("first").rfind("NOT_FOUND", 0), 0u);
  for (int i = 0; i < kLarge; ++i) {
    ASSERT_EQ(harness.GetOrStatus(BigKey(i)).rfind("NOT_FOUND", 0), 0u)
        << "large put " << i << " survived the write before it";
  }
  const RecoveryReport report = harness.region()->stats().recovery;
  EXPECT_EQ(report.cut_lsn, 1u);
  EXPECT_EQ(report.replayed_writes, 0u);
  EXPECT_GE(report.dropped_writes, 100u);  // what the buffer held, at least

  // Opening ended the cut logs for good: a second open finds nothing past
  // their ends (a clean close before any write once rewrote the block of
  // a cut with zeros after it, which the next open took for damage).
  harness.CloseAndReopen();
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  EXPECT_EQ(harness.region()->stats().recovery.dropped_writes, 0u);
  EXPECT_EQ(harness.GetOrStatus(BigKey(0)).rfind("NOT_FOUND", 0), 0u);

  // The region goes on from the recovered point: new writes reuse the
  // dropped LSNs, and the dropped records never come back.
  ASSERT_TRUE(harness.region()->Put("second", "small").ok());
  ASSERT_TRUE(harness.region()->Put(BigKey(0), "now small").ok());
  ASSERT_TRUE(harness.region()->Put("large-after", LargeValue(1)).ok());
  ASSERT_TRUE(harness.region()->Sync().ok());
  harness.CrashAndReopen(MemoryDevice::CrashMode::kProcessKill);
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  EXPECT_EQ(harness.GetOrStatus("second"), "small");
  EXPECT_EQ(harness.GetOrStatus(BigKey(0)), "now small");
  EXPECT_EQ(harness.GetOrStatus("large-after"), LargeValue(1));
  for (int i = 1; i < kLarge; ++i) {
    ASSERT_EQ(harness.GetOrStatus(BigKey(i)).rfind("NOT_FOUND", 0), 0u) << i;
  }
  EXPECT_EQ(harness.region()->stats().recovery.dropped_writes, 0u);
  EXPECT_EQ(harness.region()->stats().recovery.replayed_writes, 3u);
}

// What a catch-up is told of the large log's current segment: its bytes.
uint64_t LargeTailBytes(RegionHarness& harness) {
  uint64_t bytes = 0;
  StateVisitor visitor;
  visitor.compacted = [](uint64_t) {};
  visitor.log_segment = [&](log::LogKind kind, uint64_t, uint64_t,
                            uint64_t segment_bytes) {
    if (kind == log::LogKind::kLarge) bytes = segment_bytes;  // last: current
  };
  visitor.index_segment = [](uint64_t) {};
  visitor.level = [](size_t, const LevelDescriptor&, uint64_t) {};
  std::vector<uint64_t> pinned;
  const Status status = harness.region()->ReportState(
      visitor, [] {}, &pinned);
  EXPECT_TRUE(status.ok()) << status.ToString();
  harness.volume()->Unpin(pinned);
  return bytes;
}

// A cut log is ended where it was cut; reopened before its next write (a
// restart, a promotion's open), it must still report the bytes up to
// there: a catch-up once told a backup the large log's current segment
// held none, and the backup refused every level pointing into it, epoch
// after epoch (PowerCutIT).
TEST(RegionRecoveryTest, ACutLogReopenedBeforeItsNextWriteReportsItsWholeTail) {
  RegionHarness harness(kCapacityBytes, {});
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  ASSERT_TRUE(harness.region()->Put("kept-large", LargeValue(0)).ok());
  ASSERT_TRUE(harness.region()->Sync().ok());
  // As in the test above: the large log reaches the device past a write
  // the write-ahead log lost, so it is cut.
  ASSERT_TRUE(harness.region()->Put("first", "small").ok());
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(harness.region()->Put(BigKey(i), LargeValue(i)).ok());
  }
  harness.CrashAndReopen(MemoryDevice::CrashMode::kProcessKill);
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  ASSERT_GT(harness.region()->stats().recovery.dropped_writes, 0u);
  const uint64_t after_cut = LargeTailBytes(harness);
  EXPECT_GT(after_cut, log::kSegmentHeaderBytes + 2000);
  harness.CloseAndReopen();
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  EXPECT_EQ(LargeTailBytes(harness), after_cut);
  EXPECT_EQ(harness.GetOrStatus("kept-large"), LargeValue(0));
  // The log moves on at its next write.
  ASSERT_TRUE(harness.region()->Put("large-after", LargeValue(2)).ok());
  ASSERT_TRUE(harness.region()->Sync().ok());
  harness.CrashAndReopen(MemoryDevice::CrashMode::kProcessKill);
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  EXPECT_EQ(harness.GetOrStatus("kept-large"), LargeValue(0));
  EXPECT_EQ(harness.GetOrStatus("large-after"), LargeValue(2));
}

TEST(RegionRecoveryTest, SegmentsPastTheRecoveredPointAreReleased) {
  RegionHarness harness(kCapacityBytes, {});
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  ASSERT_TRUE(harness.region()->Put("kept", "durable").ok());
  // So that the large log's cut falls inside a block, not on its start.
  ASSERT_TRUE(harness.region()->Put("kept-large", LargeValue(25)).ok());
  ASSERT_TRUE(harness.region()->Sync().ok());
  ASSERT_TRUE(harness.region()->Put("lost", "small").ok());
  // Over two 2 MiB segments of the large log: it rolls twice, and each
  // roll's metadata commit syncs the device, so they are durable too.
  constexpr int kLarge = 2200;
  for (int i = 0; i < kLarge; ++i) {
    ASSERT_TRUE(harness.region()->Put(BigKey(i), LargeValue(i)).ok());
  }
  ASSERT_GE(harness.region()->LogSegments(log::LogKind::kLarge).size(), 3u);
  const uint64_t allocated = harness.volume()->stats().allocated_segments;
  harness.CrashAndReopen(MemoryDevice::CrashMode::kDropUnsynced);
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  EXPECT_EQ(harness.GetOrStatus("kept"), "durable");
  EXPECT_EQ(harness.GetOrStatus("lost").rfind("NOT_FOUND", 0), 0u);
  EXPECT_EQ(harness.GetOrStatus(BigKey(kLarge - 1)).rfind("NOT_FOUND", 0), 0u);
  const RecoveryReport report = harness.region()->stats().recovery;
  EXPECT_EQ(report.cut_lsn, 3u);
  EXPECT_GE(report.dropped_writes, 2000u);
  // The large log's segments after the cut (two at least) are free again.
  EXPECT_LE(harness.volume()->stats().allocated_segments + 2, allocated);
  harness.CloseAndReopen();
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  EXPECT_EQ(harness.region()->stats().recovery.dropped_writes, 0u);
  EXPECT_EQ(harness.GetOrStatus("kept"), "durable");
  EXPECT_EQ(harness.GetOrStatus("kept-large"), LargeValue(25));

  // Opening ended the large log at the cut and released the segments after
  // it (two at least); the first append takes a new segment for each log:
  // the large log holds two segments then (the cut one and the new one).
  ASSERT_TRUE(harness.region()->Put("again", LargeValue(2)).ok());
  ASSERT_TRUE(harness.region()->Put("again-small", "x").ok());
  ASSERT_TRUE(harness.region()->Sync().ok());
  EXPECT_EQ(harness.region()->LogSegments(log::LogKind::kLarge).size(), 2u);
  harness.CrashAndReopen(MemoryDevice::CrashMode::kDropUnsynced);
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  EXPECT_EQ(harness.GetOrStatus("again"), LargeValue(2));
  EXPECT_EQ(harness.GetOrStatus("again-small"), "x");
  EXPECT_EQ(harness.GetOrStatus("kept"), "durable");
  EXPECT_EQ(harness.GetOrStatus("kept-large"), LargeValue(25));
  EXPECT_EQ(harness.GetOrStatus(BigKey(5)).rfind("NOT_FOUND", 0), 0u);
  EXPECT_EQ(harness.region()->stats().recovery.dropped_writes, 0u);
}

TEST(RegionRecoveryTest, AReopenWithNothingLostDropsNothing) {
  RegionHarness harness(kCapacityBytes, {});
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  for (int i = 0; i < 500; ++i) {
    ASSERT_TRUE(harness.region()
                    ->Put(BigKey(i), i % 3 == 0 ? LargeValue(i) : "v")
                    .ok());
    if (i % 7 == 0) {
      ASSERT_TRUE(harness.region()->Delete(BigKey(i / 2)).ok());
    }
  }
  ASSERT_TRUE(harness.region()->Sync().ok());
  harness.CrashAndReopen(MemoryDevice::CrashMode::kDropUnsynced);
  ASSERT_TRUE(harness.status().ok()) << harness.status().ToString();
  const RecoveryReport report = harness.region()->stats().recovery;
  EXPECT_EQ(report.dropped_writes, 0u);
  EXPECT_EQ(report.cut_lsn, 0u);
  EXPECT_EQ(report.replayed_writes, 500u + 72u);
  EXPECT_EQ(harness.region()->stats().last_lsn, 572u);
}

}  // namespace
}  // namespace kvs::lsm
