#include "alloc/volume.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "alloc/device_offset.h"
#include "testing/memory_device.h"
#include "testing/random_keys.h"
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

class VolumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = MemoryDevice::Create(64 * kSegment);
    ASSERT_TRUE(Volume::Create(device_->Open(), options_, &volume_).ok());
  }

  void Reopen() {
    volume_.reset();
    const Status status = Volume::Open(device_->Open(), options_, &volume_);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }

  // Reserves and commits `count` segments with one catalog entry naming them.
  std::vector<uint64_t> AllocateSegments(int count, const std::string& key) {
    MetadataBatch batch;
    std::vector<uint64_t> segments;
    for (int i = 0; i < count; ++i) {
      uint64_t segment = 0;
      EXPECT_TRUE(volume_->Reserve(&segment).ok());
      batch.Allocate(segment);
      segments.push_back(segment);
    }
    batch.Put(key, std::to_string(segments.size()));
    EXPECT_TRUE(volume_->Commit(batch).ok());
    return segments;
  }

  VolumeOptions options_ = SmallOptions();
  std::shared_ptr<MemoryDevice> device_;
  std::unique_ptr<Volume> volume_;
};

TEST_F(VolumeTest, NewVolumeOwnsOnlyItsMetadataSegments) {
  // Segment 0 (superblocks), one checkpoint segment, one redo segment.
  EXPECT_EQ(volume_->stats().allocated_segments, 3u);
  EXPECT_EQ(volume_->stats().reserved_segments, 0u);
  EXPECT_TRUE(volume_->IsAllocated(0));
  Reopen();
  EXPECT_EQ(volume_->stats().allocated_segments, 3u);
  EXPECT_TRUE(volume_->CatalogScan("").empty());
}

TEST_F(VolumeTest, CommittedAllocationsFreesAndCatalogSurviveReopen) {
  const auto segments = AllocateSegments(3, "region/a");
  MetadataBatch batch;
  batch.Free(segments[1]);
  batch.Put(std::string("key\0with\xffzero", 14), "value");
  batch.Delete("region/a");
  ASSERT_TRUE(volume_->Commit(batch).ok());
  Reopen();
  EXPECT_TRUE(volume_->IsAllocated(segments[0]));
  EXPECT_FALSE(volume_->IsAllocated(segments[1]));
  EXPECT_TRUE(volume_->IsAllocated(segments[2]));
  EXPECT_FALSE(volume_->CatalogGet("region/a").has_value());
  EXPECT_EQ(volume_->CatalogGet(std::string("key\0with\xffzero", 14)), "value");
  EXPECT_EQ(volume_->stats().allocated_segments, 5u);
}

TEST_F(VolumeTest, UncommittedReservationsAreFreeAfterACrash) {
  uint64_t first = 0, second = 0;
  ASSERT_TRUE(volume_->Reserve(&first).ok());
  ASSERT_TRUE(volume_->Reserve(&second).ok());
  EXPECT_NE(first, second);
  EXPECT_EQ(volume_->stats().reserved_segments, 2u);
  device_->Crash(MemoryDevice::CrashMode::kDropUnsynced);
  Reopen();
  EXPECT_FALSE(volume_->IsAllocated(first));
  EXPECT_EQ(volume_->stats().reserved_segments, 0u);
  EXPECT_EQ(volume_->stats().allocated_segments, 3u);
}

TEST_F(VolumeTest, ReservedSegmentsAreNeverHandedOutTwice) {
  std::set<uint64_t> seen;
  for (int i = 0; i < 40; ++i) {  // forces the file to grow several times
    uint64_t segment = 0;
    ASSERT_TRUE(volume_->Reserve(&segment).ok());
    EXPECT_TRUE(seen.insert(segment).second) << segment;
    EXPECT_FALSE(volume_->IsAllocated(segment));
    EXPECT_NE(segment, 0u);
  }
  EXPECT_GE(volume_->stats().capacity_segments, 43u);
}

TEST_F(VolumeTest, AFreeWhoseSyncFailedIsNotReused) {
  const auto segments = AllocateSegments(1, "data");
  device_->FailNextSync();
  MetadataBatch batch;
  batch.Free(segments[0]);
  EXPECT_EQ(volume_->Commit(batch).code(), Status::Code::kIoError);
  // Sticky: nothing more is handed out or committed.
  uint64_t segment = 0;
  EXPECT_FALSE(volume_->Reserve(&segment).ok());
  EXPECT_NE(volume_->health().message().find("volume stopped"),
            std::string_view::npos);
  device_->Crash(MemoryDevice::CrashMode::kDropUnsynced);
  Reopen();
  EXPECT_TRUE(volume_->IsAllocated(segments[0]));
}

TEST_F(VolumeTest, DeferredFreesAreDurableButNotReusedUntilReleased) {
  // How many segments data can take before the device is full (what is
  // left is the metadata headroom); all handed back after counting.
  auto reservable = [&] {
    std::vector<uint64_t> taken;
    uint64_t segment = 0;
    Status status;
    while ((status = volume_->Reserve(&segment)).ok()) taken.push_back(segment);
    EXPECT_TRUE(status.IsNoSpace()) << status.ToString();
    for (uint64_t reserved : taken) volume_->Unreserve(reserved);
    return taken;
  };
  const auto segments = AllocateSegments(2, "level");
  const size_t before = reservable().size();
  MetadataBatch batch;
  batch.FreeDeferred(segments[0]);
  batch.Free(segments[1]);
  ASSERT_TRUE(volume_->Commit(batch).ok());
  EXPECT_FALSE(volume_->IsAllocated(segments[0]));
  EXPECT_FALSE(volume_->IsAllocated(segments[1]));
  // Only the plain free can be handed out again...
  const std::vector<uint64_t> taken = reservable();
  EXPECT_EQ(taken.size(), before + 1);
  EXPECT_EQ(std::count(taken.begin(), taken.end(), segments[0]), 0);
  // ...until the deferred one is released.
  volume_->ReleaseDeferred(segments[0]);
  EXPECT_EQ(reservable().size(), before + 2);
}

// A pinned segment (a replication catch-up reading it) is freed durably by
// its owner's commits, but handed out again only once its last pin goes.
TEST_F(VolumeTest, PinnedSegmentsAreNotReusedUntilUnpinned) {
  auto reservable = [&] {
    std::vector<uint64_t> taken;
    uint64_t segment = 0;
    while (volume_->Reserve(&segment).ok()) taken.push_back(segment);
    for (uint64_t reserved : taken) volume_->Unreserve(reserved);
    return taken;
  };
  const auto segments = AllocateSegments(3, "log");
  const size_t before = reservable().size();
  volume_->Pin({segments[0], segments[1]});
  volume_->Pin({segments[1]});  // pins nest
  MetadataBatch batch;
  batch.Free(segments[0]);
  batch.Free(segments[1]);
  batch.FreeDeferred(segments[2]);
  ASSERT_TRUE(volume_->Commit(batch).ok());
  EXPECT_FALSE(volume_->IsAllocated(segments[0]));
  volume_->Pin({segments[2]});
  volume_->ReleaseDeferred(segments[2]);
  EXPECT_EQ(reservable().size(), before);  // all three still taken
  volume_->Unpin({segments[0], segments[1]});
  std::vector<uint64_t> taken = reservable();
  EXPECT_EQ(taken.size(), before + 1);
  EXPECT_EQ(std::count(taken.begin(), taken.end(), segments[0]), 1);
  volume_->Unpin({segments[1], segments[2]});
  EXPECT_EQ(reservable().size(), before + 3);
  // Unpinning a segment never pinned is a programmer error.
  EXPECT_DEATH(volume_->Unpin({segments[0]}), "not pinned");
}

TEST_F(VolumeTest, ABatchNamingASegmentTwiceIsRefusedBeforeItIsWritten) {
  uint64_t segment = 0;
  ASSERT_TRUE(volume_->Reserve(&segment).ok());
  MetadataBatch batch;
  batch.Allocate(segment);
  batch.Allocate(segment);
  const uint64_t writes = device_->writes();
  EXPECT_DEATH((void)volume_->Commit(batch), "names a segment twice");
  EXPECT_EQ(device_->writes(), writes);
  Reopen();  // nothing durable was left behind
}

TEST_F(VolumeTest, RedoChainGrowsAcrossSegments) {
  options_.checkpoint_redo_bytes = 1ull << 40;  // never checkpoint
  Reopen();
  // One block per batch: 600 batches need more than one 2 MiB segment.
  for (int i = 0; i < 600; ++i) {
    MetadataBatch batch;
    batch.Put("k" + std::to_string(i), std::string(100, static_cast<char>(i)));
    ASSERT_TRUE(volume_->Commit(batch).ok()) << i;
  }
  EXPECT_EQ(volume_->stats().allocated_segments, 4u);  // chain of two
  Reopen();
  EXPECT_EQ(volume_->CatalogScan("k").size(), 600u);
  EXPECT_EQ(volume_->CatalogGet("k599"), std::string(100, char(599 % 256)));
  EXPECT_EQ(volume_->stats().allocated_segments, 4u);
}

TEST_F(VolumeTest, CheckpointsReleaseTheOldChainAndLeakNothing) {
  options_.checkpoint_redo_bytes = 64 * 1024;  // every 16 batches
  Reopen();
  std::vector<uint64_t> kept;
  for (int i = 0; i < 100; ++i) {
    const auto segments = AllocateSegments(1, "seg/" + std::to_string(i));
    if (i % 2 == 0) {
      kept.push_back(segments[0]);
    } else {
      MetadataBatch batch;
      batch.Free(segments[0]);
      ASSERT_TRUE(volume_->Commit(batch).ok());
    }
  }
  EXPECT_GE(volume_->stats().checkpoints, 5u);
  // Superblock + checkpoint + one redo segment + the kept segments.
  EXPECT_EQ(volume_->stats().allocated_segments, 3 + kept.size());
  Reopen();
  EXPECT_EQ(volume_->stats().allocated_segments, 3 + kept.size());
  for (uint64_t segment : kept) {
    EXPECT_TRUE(volume_->IsAllocated(segment));
  }
  EXPECT_EQ(volume_->CatalogScan("seg/").size(), 100u);
}

TEST_F(VolumeTest, TornNewestRecordIsDroppedAndEarlierOnesKept) {
  for (uint64_t seed = 0; seed < 8; ++seed) {
    MetadataBatch durable;
    durable.Put("durable" + std::to_string(seed), "yes");
    ASSERT_TRUE(volume_->Commit(durable).ok());
    device_->FailNextSync();
    MetadataBatch torn;
    torn.Put("torn" + std::to_string(seed), std::string(9000, 'x'));
    EXPECT_FALSE(volume_->Commit(torn).ok());
    device_->Crash(MemoryDevice::CrashMode::kTearUnsynced, seed);
    Reopen();
    EXPECT_EQ(volume_->CatalogGet("durable" + std::to_string(seed)), "yes");
    // Either wholly there (every block survived) or absent, never partial.
    const auto value = volume_->CatalogGet("torn" + std::to_string(seed));
    if (value.has_value()) {
      EXPECT_EQ(*value, std::string(9000, 'x'));
    }
  }
}

TEST_F(VolumeTest, DamageInTheMiddleOfTheRedoLogIsReported) {
  for (int i = 0; i < 3; ++i) {
    MetadataBatch batch;
    batch.Put("k" + std::to_string(i), "v");
    ASSERT_TRUE(volume_->Commit(batch).ok());
  }
  const auto entries = volume_->CatalogScan("");
  ASSERT_EQ(entries.size(), 3u);
  // The first record sits in the block after the redo segment header; the
  // redo segment is the newest allocated one, found by scanning.
  uint64_t redo_segment = 0;
  for (uint64_t segment = 1; segment < 5; ++segment) {
    if (device_->ReadDurable(SegmentStart(segment), 8) == "KVSREDO1") {
      redo_segment = segment;
    }
  }
  ASSERT_NE(redo_segment, 0u);
  device_->FlipBit(SegmentStart(redo_segment) + 4096 + 40, 3);
  volume_.reset();
  const Status status = Volume::Open(device_->Open(), options_, &volume_);
  EXPECT_TRUE(status.IsCorruption()) << status.ToString();
  EXPECT_NE(status.message().find("later record"), std::string_view::npos)
      << status.ToString();
}

TEST_F(VolumeTest, ADamagedNewestSuperblockFallsBackToTheOtherCopy) {
  MetadataBatch batch;
  batch.Put("before", "checkpoint");
  ASSERT_TRUE(volume_->Commit(batch).ok());
  ASSERT_TRUE(volume_->Checkpoint().ok());  // writes superblock sequence 2
  device_->FlipBit(kSuperblockOffsets[0] + 100, 0);
  Reopen();
  EXPECT_EQ(volume_->CatalogGet("before"), "checkpoint");
}

TEST_F(VolumeTest, BothSuperblocksDamagedIsCorruption) {
  ASSERT_TRUE(volume_->Checkpoint().ok());
  device_->FlipBit(kSuperblockOffsets[0] + 100, 0);
  device_->FlipBit(kSuperblockOffsets[1] + 100, 0);
  volume_.reset();
  const Status status = Volume::Open(device_->Open(), options_, &volume_);
  EXPECT_TRUE(status.IsCorruption()) << status.ToString();
}

TEST(VolumeOpenTest, AnEmptyDeviceIsNotAVolume) {
  auto device = MemoryDevice::Create(8 * kSegment);
  auto file = device->Open();
  ASSERT_TRUE(file->Grow(2 * kSegment).ok());
  std::unique_ptr<Volume> volume;
  EXPECT_TRUE(Volume::Open(std::move(file), {}, &volume).IsNotFound());
}

TEST(VolumeFullTest, ReserveFailsCleanlyWhenTheDeviceIsFullAndRecovers) {
  auto device = MemoryDevice::Create(9 * kSegment);
  std::unique_ptr<Volume> volume;
  ASSERT_TRUE(Volume::Create(device->Open(), SmallOptions(), &volume).ok());
  std::vector<uint64_t> reserved;
  Status status;
  while (true) {
    uint64_t segment = 0;
    status = volume->Reserve(&segment);
    if (!status.ok()) break;
    reserved.push_back(segment);
  }
  EXPECT_EQ(status.code(), Status::Code::kIoError);
  EXPECT_NE(status.message().find("volume full"), std::string_view::npos);
  EXPECT_TRUE(volume->health().ok());  // an operating error, not sticky
  volume->Unreserve(reserved.back());
  MetadataBatch batch;
  batch.Allocate(reserved.front());
  EXPECT_TRUE(volume->Commit(batch).ok());
}

// Random operations against a model, with crashes (dropping unsynced
// writes) and reopens in between: the durable state always equals the model.
TEST(VolumeModelTest, RandomOperationsCrashesAndReopensMatchAModel) {
  auto device = MemoryDevice::Create(64 * kSegment);
  VolumeOptions options = SmallOptions();
  options.checkpoint_redo_bytes = 96 * 1024;
  std::unique_ptr<Volume> volume;
  ASSERT_TRUE(Volume::Create(device->Open(), options, &volume).ok());
  testing::RandomBytes random(2024);
  std::set<uint64_t> owned;
  std::map<std::string, std::string> catalog;
  for (int step = 0; step < 800; ++step) {
    const uint64_t action = random.Uniform(100);
    if (action < 2) {
      device->Crash(MemoryDevice::CrashMode::kDropUnsynced);
      volume.reset();
      ASSERT_TRUE(Volume::Open(device->Open(), options, &volume).ok());
      for (uint64_t segment : owned) {
        ASSERT_TRUE(volume->IsAllocated(segment)) << step;
      }
      ASSERT_EQ(volume->CatalogScan("").size(), catalog.size()) << step;
      for (const auto& [key, value] : catalog) {
        ASSERT_EQ(volume->CatalogGet(key), value) << step;
      }
      continue;
    }
    MetadataBatch batch;
    const uint64_t allocations = random.Uniform(2);
    for (uint64_t i = 0; i < allocations; ++i) {
      uint64_t segment = 0;
      ASSERT_TRUE(volume->Reserve(&segment).ok());
      batch.Allocate(segment);
    }
    if (owned.size() > 20 || (!owned.empty() && random.Uniform(2) == 0)) {
      auto it = owned.begin();
      std::advance(it, static_cast<long>(random.Uniform(owned.size())));
      batch.Free(*it);
    }
    const std::string key = random.Key(1, 6);
    if (random.Uniform(4) == 0) {
      batch.Delete(key);
    } else {
      batch.Put(key, random.Bytes(random.Uniform(300)));
    }
    ASSERT_TRUE(volume->Commit(batch).ok()) << step;
    for (uint64_t segment : batch.allocations()) owned.insert(segment);
    for (uint64_t segment : batch.frees()) owned.erase(segment);
    for (const auto& [k, v] : batch.puts()) catalog[k] = v;
    for (const auto& k : batch.deletes()) catalog.erase(k);
  }
  EXPECT_GE(volume->stats().checkpoints, 3u);
}

}  // namespace
}  // namespace kvs::alloc
