// Segment reference counts (volume format 2): shared segments stay
// allocated until their last reference goes, across redo replay and
// checkpoints; a deferred free keeps its owner's readers safe whoever drops
// the last reference; a volume of format 1 is upgraded on open and a newer
// one refused.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "alloc/checkpoint.h"
#include "alloc/device_offset.h"
#include "alloc/metadata_batch.h"
#include "alloc/superblock.h"
#include "alloc/volume.h"
#include "io/aligned_buffer.h"
#include "testing/memory_device.h"
#include "testing/random_keys.h"
#include "util/crc32c.h"
#include "util/limits.h"

namespace kvs::alloc {
namespace {

using testing::MemoryDevice;

constexpr uint64_t kSegment = limits::segment_size_bytes;

VolumeOptions SmallOptions() {
  VolumeOptions options;
  options.grow_step_segments = 4;
  return options;
}

class VolumeReferencesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = MemoryDevice::Create(64 * kSegment);
    ASSERT_TRUE(Volume::Create(device_->Open(), options_, &volume_).ok());
  }

  Status Reopen() {
    volume_.reset();
    return Volume::Open(device_->Open(), options_, &volume_);
  }

  uint64_t Allocate() {
    uint64_t segment = 0;
    EXPECT_TRUE(volume_->Reserve(&segment).ok());
    MetadataBatch batch;
    batch.Allocate(segment);
    EXPECT_TRUE(volume_->Commit(batch).ok());
    return segment;
  }

  // The segments data could take now, all handed back after counting.
  std::vector<uint64_t> Reservable() {
    std::vector<uint64_t> taken;
    uint64_t segment = 0;
    while (volume_->Reserve(&segment).ok()) taken.push_back(segment);
    for (uint64_t reserved : taken) volume_->Unreserve(reserved);
    return taken;
  }

  bool Reusable(uint64_t segment) {
    const std::vector<uint64_t> taken = Reservable();
    return std::find(taken.begin(), taken.end(), segment) != taken.end();
  }

  // The newest superblock copy on the device.
  Superblock NewestSuperblock() {
    Superblock copies[2];
    int newest = -1;
    for (int i = 0; i < 2; ++i) {
      const std::string block =
          device_->ReadDurable(kSuperblockOffsets[i], kSuperblockBytes);
      if (Superblock::Decode(block, &copies[i]).ok() &&
          (newest < 0 || copies[i].sequence > copies[newest].sequence)) {
        newest = i;
      }
    }
    EXPECT_GE(newest, 0);
    return copies[newest];
  }

  void WriteSuperblock(const Superblock& superblock) {
    auto file = device_->Open();
    io::AlignedBuffer block(kSuperblockBytes);
    const std::string encoded = superblock.Encode();
    std::memcpy(block.data(), encoded.data(), encoded.size());
    ASSERT_TRUE(
        file->Write(kSuperblockOffsets[superblock.sequence % 2], block.view())
            .ok());
    ASSERT_TRUE(file->Sync().ok());
  }

  // Rewrites the newest checkpoint (holding no shares) and its superblock as
  // volume format 1 wrote them: "KVSCKPT1", no shares section, version 1.
  void DowngradeToFormatOne() {
    ASSERT_TRUE(volume_->Checkpoint().ok());
    volume_.reset();
    Superblock superblock = NewestSuperblock();
    std::string blob;
    for (uint64_t segment : superblock.checkpoint_segments) {
      blob += device_->ReadDurable(SegmentStart(segment), kSegment);
    }
    blob.resize(superblock.checkpoint_bytes);
    ASSERT_EQ(blob.substr(0, 8), "KVSCKPT2");
    ASSERT_EQ(blob.back(), '\0');  // an empty shares section
    blob.pop_back();
    blob[7] = '1';
    auto file = device_->Open();
    io::AlignedBuffer buffer(kSegment);
    for (size_t i = 0; i < superblock.checkpoint_segments.size(); ++i) {
      std::memset(buffer.data(), 0, buffer.size());
      const size_t start = i * kSegment;
      std::memcpy(buffer.data(), blob.data() + start,
                  std::min<size_t>(kSegment, blob.size() - start));
      ASSERT_TRUE(file->Write(SegmentStart(superblock.checkpoint_segments[i]),
                              buffer.view())
                      .ok());
    }
    superblock.format_version = 1;
    superblock.checkpoint_bytes = blob.size();
    superblock.checkpoint_crc =
        crc32c::Mask(crc32c::Value(blob.data(), blob.size()));
    WriteSuperblock(superblock);
  }

  VolumeOptions options_ = SmallOptions();
  std::shared_ptr<MemoryDevice> device_;
  std::unique_ptr<Volume> volume_;
};

TEST_F(VolumeReferencesTest, ASharedSegmentIsFreedAtItsLastReference) {
  const uint64_t segment = Allocate();
  MetadataBatch share;
  share.Share(segment);
  share.Share(segment);
  ASSERT_TRUE(volume_->Commit(share).ok());
  EXPECT_EQ(volume_->References(segment), 3u);
  EXPECT_EQ(volume_->stats().shared_segments, 1u);
  ASSERT_TRUE(Reopen().ok());  // from the redo log
  EXPECT_EQ(volume_->References(segment), 3u);

  MetadataBatch first;
  first.Free(segment);
  ASSERT_TRUE(volume_->Commit(first).ok());
  ASSERT_TRUE(volume_->Checkpoint().ok());
  ASSERT_TRUE(Reopen().ok());  // from the checkpoint
  EXPECT_EQ(volume_->References(segment), 2u);
  EXPECT_FALSE(Reusable(segment));

  MetadataBatch second;
  second.Free(segment);
  ASSERT_TRUE(volume_->Commit(second).ok());
  EXPECT_TRUE(volume_->IsAllocated(segment));
  EXPECT_FALSE(Reusable(segment));
  MetadataBatch last;
  last.Free(segment);
  ASSERT_TRUE(volume_->Commit(last).ok());
  EXPECT_EQ(volume_->References(segment), 0u);
  EXPECT_EQ(volume_->stats().shared_segments, 0u);
  EXPECT_TRUE(Reusable(segment));
  ASSERT_TRUE(Reopen().ok());
  EXPECT_FALSE(volume_->IsAllocated(segment));
}

TEST_F(VolumeReferencesTest, ASegmentSharedInTheBatchThatAllocatesItHasTwo) {
  uint64_t segment = 0;
  ASSERT_TRUE(volume_->Reserve(&segment).ok());
  MetadataBatch batch;
  batch.Allocate(segment);
  batch.Share(segment);
  ASSERT_TRUE(volume_->Commit(batch).ok());
  ASSERT_TRUE(Reopen().ok());
  EXPECT_EQ(volume_->References(segment), 2u);
}

// An owner replacing a level frees its segments deferred (its readers may
// still read them); another owner sharing them frees its reference plainly
// meanwhile: the segments stay taken until the first owner's release.
TEST_F(VolumeReferencesTest, ADeferredFreeHoldsItsReadersAcrossTheLastFree) {
  const uint64_t segment = Allocate();
  MetadataBatch share;
  share.Share(segment);
  ASSERT_TRUE(volume_->Commit(share).ok());
  MetadataBatch replaced;
  replaced.FreeDeferred(segment);
  ASSERT_TRUE(volume_->Commit(replaced).ok());
  MetadataBatch other;
  other.Free(segment);
  ASSERT_TRUE(volume_->Commit(other).ok());
  EXPECT_FALSE(volume_->IsAllocated(segment));
  EXPECT_FALSE(Reusable(segment));
  volume_->ReleaseDeferred(segment);
  EXPECT_TRUE(Reusable(segment));
}

TEST_F(VolumeReferencesTest, SharingOrFreeingASegmentNotAllocatedIsAnError) {
  uint64_t segment = 0;
  ASSERT_TRUE(volume_->Reserve(&segment).ok());
  MetadataBatch share;
  share.Share(segment);
  const uint64_t writes = device_->writes();
  EXPECT_DEATH((void)volume_->Commit(share), "sharing a segment");
  EXPECT_EQ(device_->writes(), writes);
}

TEST_F(VolumeReferencesTest, AFormatOneVolumeIsUpgradedOnOpen) {
  const uint64_t segment = Allocate();
  MetadataBatch put;
  put.Put("region/1", "descriptor");
  ASSERT_TRUE(volume_->Commit(put).ok());
  DowngradeToFormatOne();
  ASSERT_EQ(NewestSuperblock().format_version, 1u);
  const Status opened = Reopen();
  ASSERT_TRUE(opened.ok()) << opened.ToString();
  EXPECT_EQ(volume_->format_version(), kSuperblockFormatVersion);
  // Both copies: a build that reads only format 1 finds no copy it reads.
  for (const uint64_t offset : kSuperblockOffsets) {
    Superblock copy;
    ASSERT_TRUE(Superblock::Decode(
                    device_->ReadDurable(offset, kSuperblockBytes), &copy)
                    .ok());
    EXPECT_EQ(copy.format_version, kSuperblockFormatVersion);
  }
  EXPECT_EQ(volume_->CatalogGet("region/1"), "descriptor");
  EXPECT_EQ(volume_->References(segment), 1u);
  MetadataBatch share;
  share.Share(segment);
  ASSERT_TRUE(volume_->Commit(share).ok());
  ASSERT_TRUE(Reopen().ok());
  EXPECT_EQ(volume_->References(segment), 2u);
}

TEST_F(VolumeReferencesTest, AVolumeOfANewerFormatIsRefusedClearly) {
  ASSERT_TRUE(volume_->Checkpoint().ok());
  volume_.reset();
  Superblock superblock = NewestSuperblock();
  superblock.format_version = kSuperblockFormatVersion + 1;
  WriteSuperblock(superblock);
  const Status status = Reopen();
  EXPECT_EQ(status.code(), Status::Code::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find("a newer KVS wrote it"),
            std::string_view::npos)
      << status.ToString();
}

TEST(MetadataBatchTest, ARecordOfFormatOneReadsAsSharingNothing) {
  MetadataBatch batch;
  batch.Allocate(7);
  batch.Free(9);
  batch.Put("k", "v");
  std::string encoded = batch.Encode();
  ASSERT_EQ(encoded.back(), '\0');  // the empty shares list, added in format 2
  encoded.pop_back();
  MetadataBatch decoded;
  ASSERT_TRUE(MetadataBatch::Decode(encoded, &decoded).ok());
  EXPECT_EQ(decoded.allocations(), std::vector<uint64_t>{7});
  EXPECT_TRUE(decoded.shares().empty());
  batch.Share(7);
  ASSERT_TRUE(MetadataBatch::Decode(batch.Encode(), &decoded).ok());
  EXPECT_EQ(decoded.shares(), std::vector<uint64_t>{7});
}

// Random allocations, shares and frees with crashes in between: every
// segment's reference count after reopening equals the model's.
TEST(VolumeReferencesModelTest, ReferenceCountsSurviveCrashesAsModelled) {
  auto device = MemoryDevice::Create(64 * kSegment);
  VolumeOptions options = SmallOptions();
  options.checkpoint_redo_bytes = 16 * 1024;
  std::unique_ptr<Volume> volume;
  ASSERT_TRUE(Volume::Create(device->Open(), options, &volume).ok());
  kvs::testing::RandomBytes random(77);
  std::map<uint64_t, uint64_t> references;
  for (int step = 0; step < 1500; ++step) {
    const uint64_t action = random.Uniform(100);
    if (action < 3) {
      device->Crash(MemoryDevice::CrashMode::kDropUnsynced);
      volume.reset();
      ASSERT_TRUE(Volume::Open(device->Open(), options, &volume).ok());
      for (const auto& [segment, count] : references) {
        ASSERT_EQ(volume->References(segment), count) << step;
      }
      continue;
    }
    MetadataBatch batch;
    std::set<uint64_t> freed;
    if (references.size() < 12 && random.Uniform(2) == 0) {
      uint64_t segment = 0;
      ASSERT_TRUE(volume->Reserve(&segment).ok());
      batch.Allocate(segment);
    }
    for (const auto& [segment, count] : references) {
      const uint64_t roll = random.Uniform(8);
      if (roll == 0) batch.Share(segment);
      if (roll == 1) {
        batch.Free(segment);
        freed.insert(segment);
      }
    }
    batch.Put("step", std::to_string(step));
    ASSERT_TRUE(volume->Commit(batch).ok()) << step;
    for (uint64_t segment : batch.allocations()) references[segment] = 1;
    for (uint64_t segment : batch.shares()) ++references[segment];
    for (uint64_t segment : freed) {
      if (--references[segment] == 0) references.erase(segment);
    }
  }
  EXPECT_GE(volume->stats().checkpoints, 3u);
}

}  // namespace
}  // namespace kvs::alloc
