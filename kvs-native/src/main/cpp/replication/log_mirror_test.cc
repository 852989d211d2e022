#include "replication/log_mirror.h"

#include <gtest/gtest.h>

#include <string>

#include "alloc/device_offset.h"
#include "testing/memory_device.h"
#include "util/limits.h"

namespace kvs::replication {
namespace {

constexpr uint64_t kSegment = limits::segment_size_bytes;

std::string Bytes(size_t size, char seed) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<char>(seed + (i * 7) % 101);
  }
  return bytes;
}

class LogMirrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = testing::MemoryDevice::Create(64 * kSegment);
    ASSERT_TRUE(alloc::Volume::Create(device_->Open(), {}, &volume_).ok());
    ASSERT_TRUE(
        LogMirror::Open(volume_.get(), 5, log::LogKind::kLarge, &mirror_).ok());
  }

  void Reopen() {
    mirror_.reset();
    volume_.reset();
    ASSERT_TRUE(alloc::Volume::Open(device_->Open(), {}, &volume_).ok());
    ASSERT_TRUE(
        LogMirror::Open(volume_.get(), 5, log::LogKind::kLarge, &mirror_).ok());
  }

  std::string ReadCopy(uint64_t primary_offset, size_t size) {
    uint64_t at = 0;
    EXPECT_TRUE(mirror_->Translate(primary_offset, &at).ok());
    std::string out(size, '\0');
    EXPECT_TRUE(volume_->file()->Read(at, size, out.data()).ok());
    return out;
  }

  std::shared_ptr<testing::MemoryDevice> device_;
  std::unique_ptr<alloc::Volume> volume_;
  std::unique_ptr<LogMirror> mirror_;
};

TEST_F(LogMirrorTest, CopiesSurviveAReopenAndTranslateOffsets) {
  const std::string first = Bytes(kSegment, 'a');
  const std::string second = Bytes(100000, 'k');  // a partial tail
  ASSERT_TRUE(mirror_->Persist(40, 0, first, /*sealed=*/true).ok());
  ASSERT_TRUE(mirror_->Persist(9, 1, second, /*sealed=*/false).ok());
  Reopen();
  const auto segments = mirror_->segments();
  ASSERT_EQ(segments.size(), 2u);
  EXPECT_TRUE(segments.at(40).sealed);
  EXPECT_EQ(segments.at(40).chain_index, 0u);
  EXPECT_EQ(segments.at(9).bytes, 100000u);
  EXPECT_FALSE(segments.at(9).sealed);
  EXPECT_NE(segments.at(40).backup_segment, segments.at(9).backup_segment);
  // Same offset in the segment, the backup's segment number.
  EXPECT_EQ(ReadCopy(alloc::DeviceOffset(40, 4096), 300),
            first.substr(4096, 300));
  EXPECT_EQ(ReadCopy(alloc::DeviceOffset(9, 99000), 1000),
            second.substr(99000, 1000));
  uint64_t at = 0;
  EXPECT_TRUE(mirror_->Translate(alloc::DeviceOffset(3, 0), &at).IsNotFound());
  EXPECT_EQ(mirror_->Translate(alloc::DeviceOffset(9, 100000), &at).code(),
            Status::Code::kInvalidArgument);
}

TEST_F(LogMirrorTest, ALongerCopyExtendsAPartialOneInPlace) {
  const std::string whole = Bytes(kSegment, 'q');
  ASSERT_TRUE(mirror_->Persist(12, 3, whole.substr(0, 5000), false).ok());
  const uint64_t partial = mirror_->segments().at(12).backup_segment;
  ASSERT_TRUE(mirror_->Persist(12, 3, whole, true).ok());
  const MirroredSegment entry = mirror_->segments().at(12);
  EXPECT_TRUE(entry.sealed);
  EXPECT_EQ(entry.bytes, kSegment);
  // The same segment: what was translated before still holds its bytes.
  EXPECT_EQ(entry.backup_segment, partial);
  EXPECT_EQ(ReadCopy(alloc::DeviceOffset(12, 4000), 2000),
            whole.substr(4000, 2000));
  EXPECT_EQ(ReadCopy(alloc::DeviceOffset(12, kSegment - 100), 100),
            whole.substr(kSegment - 100));
  // Never shorter, never of another chain position.
  EXPECT_EQ(mirror_->Persist(12, 3, whole.substr(0, 10), true).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(mirror_->Persist(12, 4, whole, true).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(mirror_->Persist(13, 0, whole + "x", true).code(),
            Status::Code::kInvalidArgument);
  Reopen();
  EXPECT_EQ(mirror_->segments().at(12).backup_segment, partial);
  EXPECT_EQ(ReadCopy(alloc::DeviceOffset(12, 0), 6000), whole.substr(0, 6000));
}

// A TRIM for a segment the primary has reused since leaves the new copy.
TEST_F(LogMirrorTest, ALateTrimNeverRemovesANewerCopy) {
  ASSERT_TRUE(mirror_->Persist(30, 4, Bytes(8192, 'n'), true).ok());
  ASSERT_TRUE(mirror_->TrimFreed({{30, 2}}).ok());  // an older use of 30
  ASSERT_EQ(mirror_->segments().count(30), 1u);
  const uint64_t copy = mirror_->segments().at(30).backup_segment;
  ASSERT_TRUE(mirror_->TrimFreed({{30, 4}, {31, 0}}).ok());
  EXPECT_EQ(mirror_->segments().count(30), 0u);
  EXPECT_FALSE(volume_->IsAllocated(copy));
}

TEST_F(LogMirrorTest, TrimmedCopiesAreFreedAndForgotten) {
  ASSERT_TRUE(mirror_->Persist(20, 0, Bytes(8192, 'x'), true).ok());
  ASSERT_TRUE(mirror_->Persist(21, 1, Bytes(8192, 'y'), true).ok());
  const uint64_t freed = mirror_->segments().at(20).backup_segment;
  ASSERT_TRUE(mirror_->Trim({20, 77}).ok());  // 77: never mirrored
  EXPECT_FALSE(volume_->IsAllocated(freed));
  Reopen();
  EXPECT_EQ(mirror_->segments().size(), 1u);
  EXPECT_EQ(mirror_->segments().count(21), 1u);
}

// A full volume: a clear error, and the map and the volume as they were.
TEST_F(LogMirrorTest, AFullVolumeFailsClearlyAndChangesNothing) {
  mirror_.reset();
  volume_.reset();
  device_ = testing::MemoryDevice::Create(12 * kSegment);
  alloc::VolumeOptions options;
  options.grow_step_segments = 4;
  ASSERT_TRUE(alloc::Volume::Create(device_->Open(), options, &volume_).ok());
  ASSERT_TRUE(
      LogMirror::Open(volume_.get(), 5, log::LogKind::kSmall, &mirror_).ok());
  Status status;
  uint64_t persisted = 0;
  for (uint64_t segment = 1; segment < 100 && status.ok(); ++segment) {
    status = mirror_->Persist(segment, segment, Bytes(4096, 'z'), true);
    if (status.ok()) ++persisted;
  }
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.ToString().find("full"), std::string::npos)
      << status.ToString();
  EXPECT_EQ(mirror_->segments().size(), persisted);
  EXPECT_EQ(volume_->stats().reserved_segments, 0u);
  mirror_.reset();
  volume_.reset();
  ASSERT_TRUE(alloc::Volume::Open(device_->Open(), options, &volume_).ok());
  ASSERT_TRUE(
      LogMirror::Open(volume_.get(), 5, log::LogKind::kSmall, &mirror_).ok());
  EXPECT_EQ(mirror_->segments().size(), persisted);
}

TEST_F(LogMirrorTest, ADamagedEntryIsCorruption) {
  alloc::MetadataBatch batch;
  batch.Put(LogMapPrefix(5, log::LogKind::kLarge) + "0000000000000001",
            "short");
  ASSERT_TRUE(volume_->Commit(batch).ok());
  std::unique_ptr<LogMirror> reopened;
  EXPECT_EQ(
      LogMirror::Open(volume_.get(), 5, log::LogKind::kLarge, &reopened).code(),
      Status::Code::kCorruption);
}

}  // namespace
}  // namespace kvs::replication
