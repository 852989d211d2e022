// Send-Index in one process: a primary region compacts; its large log is
// mirrored (as LogShippingTest does) and every index segment and installed
// level goes to an IndexInstaller on a backup volume. The backup's levels
// must then read as the primary's: same keys and values, value records at
// the translated offsets holding the same bytes, Bloom filters that work.

#include "replication/index_installer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "alloc/device_offset.h"
#include "alloc/metadata_batch.h"
#include "btree/leaf_node.h"
#include "btree/tree_reader.h"
#include "lsm/level.h"
#include "lsm/node_cache.h"
#include "lsm/region.h"
#include "testing/level_compare.h"
#include "testing/memory_device.h"
#include "testing/random_keys.h"
#include "util/limits.h"

namespace kvs::replication {
namespace {

constexpr uint64_t kSegment = limits::segment_size_bytes;

struct Node {
  std::shared_ptr<testing::MemoryDevice> device;
  std::unique_ptr<alloc::Volume> volume;
  std::unique_ptr<lsm::NodeCache> nodes;

  void Create() {
    device = testing::MemoryDevice::Create(256 * kSegment);
    ASSERT_TRUE(alloc::Volume::Create(device->Open(), {}, &volume).ok());
    nodes = std::make_unique<lsm::NodeCache>(volume->file(), 8 << 20);
  }
};

class IndexInstallerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    primary_.Create();
    backup_.Create();
    // The backup's own data: its segment numbers differ from the
    // primary's, so every pointer must really be translated.
    alloc::MetadataBatch taken;
    for (int i = 0; i < 7; ++i) {
      uint64_t segment = 0;
      ASSERT_TRUE(backup_.volume->Reserve(&segment).ok());
      taken.Allocate(segment);
    }
    ASSERT_TRUE(backup_.volume->Commit(taken).ok());
    for (Mirrored* log : {&large_, &medium_}) {
      ASSERT_TRUE(
          LogMirror::Open(backup_.volume.get(), 1, log->kind, &log->mirror)
              .ok());
    }
    ASSERT_TRUE(IndexInstaller::Open(
                    backup_.volume.get(), 1,
                    {large_.mirror.get(), medium_.mirror.get()}, &installer_)
                    .ok());
    sync_group_ = std::make_unique<io::SyncGroup>(primary_.volume->file());
    records_ = std::make_unique<lsm::RecordReader>(primary_.volume->file());
    context_.volume = primary_.volume.get();
    context_.sync_group = sync_group_.get();
    context_.nodes = primary_.nodes.get();
    context_.records = records_.get();
    context_.compactions = &pool_;
    context_.on_log_append = [this](uint64_t, log::LogKind kind,
                                    const log::AppendedBytes& appended) {
      if (kind == log::LogKind::kSmall) return;  // small values live in L0
      std::lock_guard<std::mutex> lock(mutex_);
      Mirrored& log = kind == log::LogKind::kLarge ? large_ : medium_;
      if (log.filling && appended.segment != log.segment) {
        log.Persist(/*sealed=*/true);
      }
      if (appended.offset == 0) {
        // A segment starts. If the primary had it before (freed, reused),
        // in this log or another, the old copy is dead too (what the
        // primary's TRIM will say; a stale copy in another log would
        // translate pointers into the wrong bytes).
        for (Mirrored* other : {&large_, &medium_}) {
          EXPECT_TRUE(other->mirror->Trim({appended.segment}).ok());
        }
        log.filling = true;
        log.segment = appended.segment;
        log.chain_index = appended.chain_index;
        log.tail.assign(kSegment, '\0');
        log.end = 0;
      }
      ASSERT_TRUE(log.filling);
      log.tail.replace(appended.offset, appended.bytes.size(), appended.bytes);
      log.end =
          std::max<size_t>(log.end, appended.offset + appended.bytes.size());
    };
    context_.on_index_segment = [this](uint64_t, size_t level, uint64_t segment,
                                       std::string_view bytes) {
      std::lock_guard<std::mutex> lock(mutex_);
      // The index may point into the logs' tails: persist them first.
      PersistTails();
      std::string shipped(bytes);
      if (tamper_) tamper_(&shipped);
      const Status status = installer_->ReceiveSegment(level, segment, shipped);
      if (!status.ok()) errors_.push_back(status);
    };
    context_.on_level_installed =
        [this](uint64_t, size_t level, const lsm::LevelDescriptor& descriptor,
               std::optional<size_t> emptied, uint64_t compacted_lsn) {
          std::lock_guard<std::mutex> lock(mutex_);
          PersistTails();
          if (lsm::Region::IsDrainingLevel(level)) {
            // A rename of L1, or (empty) a draining level merged into L2
            // with others, emptied after the install of L2.
            ++(descriptor.empty() ? emptied_after_ : renames_);
          }
          const Status status = installer_->Install(level, descriptor, emptied,
                                                    compacted_lsn, nullptr);
          if (!status.ok()) errors_.push_back(status);
        };
    options_.l0_size_bytes = 1 << 20;
    // Several levels, kept (no merging everything down into the last):
    // the upper ones keep medium values in the medium log.
    options_.growth_factor = 2;
    options_.stale_fraction_max = 1.0;
    ASSERT_TRUE(
        lsm::Region::Create(context_, "users", 1, options_, &region_).ok());
  }

  void TearDown() override { region_.reset(); }

  void PersistTails() {
    for (Mirrored* log : {&large_, &medium_}) {
      if (log->filling) log->Persist(/*sealed=*/false);
    }
  }

  // Values of every size category, overwrites and deletes, over several
  // compactions.
  void Write(int operations) {
    testing::RandomBytes random(5 + written_);
    for (int i = written_; i < written_ + operations; ++i) {
      const std::string key = "key" + std::to_string(i % 6000);
      if (i % 29 == 0) {
        ASSERT_TRUE(region_->Delete(key).ok());
      } else {
        const size_t size = i % 3 == 0 ? 8 : i % 3 == 1 ? 500 : 3000;
        ASSERT_TRUE(region_->Put(key, random.Bytes(size)).ok());
      }
    }
    written_ += operations;
    region_->WaitForCompactions();
  }

  // Every installed level of the backup reads as the primary's.
  void ExpectSameLevels() {
    const std::vector<lsm::LevelDescriptor> primary_levels =
        region_->LevelDescriptors();
    size_t compared = 0;
    for (size_t level = 0; level < primary_levels.size(); ++level) {
      if (primary_levels[level].empty()) {
        EXPECT_EQ(installer_->levels().count(level), 0u) << level;
        continue;
      }
      ASSERT_EQ(installer_->levels().count(level), 1u) << level;
      ExpectSameLevel(primary_levels[level], installer_->levels().at(level));
      ++compared;
    }
    EXPECT_GT(compared, 0u);
    EXPECT_EQ(installer_->levels().size(), compared);
  }

  void ExpectSameLevel(const lsm::LevelDescriptor& primary,
                       const lsm::LevelDescriptor& backup) {
    testing::LevelComparison counts;
    const Status same = testing::CompareLevels(
        primary_.volume->file(), primary_.nodes.get(), primary,
        backup_.volume->file(), backup, &counts);
    ASSERT_TRUE(same.ok()) << same.ToString();
    EXPECT_GT(counts.in_log, 0u);
    medium_values_checked_ += counts.medium_values;
    moved_pointers_ += counts.moved_pointers;
  }

  int written_ = 0;
  uint64_t medium_values_checked_ = 0;
  uint64_t moved_pointers_ = 0;  // value pointers the backup translated
  Node primary_, backup_;
  std::unique_ptr<io::SyncGroup> sync_group_;
  std::unique_ptr<lsm::RecordReader> records_;
  ThreadPool pool_{1};
  lsm::RegionContext context_;
  lsm::RegionOptions options_;
  std::unique_ptr<lsm::Region> region_;
  // A log of the primary as the backup copies it: the segment being
  // filled, persisted when the next one starts or an index may need it.
  struct Mirrored {
    explicit Mirrored(log::LogKind log_kind) : kind(log_kind) {}
    log::LogKind kind;
    std::unique_ptr<LogMirror> mirror;
    bool filling = false;
    uint64_t segment = 0;
    uint64_t chain_index = 0;
    std::string tail;
    size_t end = 0;

    void Persist(bool sealed) {
      const Status status = mirror->Persist(
          segment, chain_index, std::string_view(tail).substr(0, end), sealed);
      EXPECT_TRUE(status.ok()) << status.ToString();
      if (sealed) filling = false;
    }
  };
  Mirrored large_{log::LogKind::kLarge};
  Mirrored medium_{log::LogKind::kMedium};
  std::unique_ptr<IndexInstaller> installer_;

  // Applied to every shipped segment before the backup gets it.
  std::function<void(std::string*)> tamper_;
  std::vector<Status> errors_;  // what the installer refused
  uint64_t renames_ = 0;        // renames of L1 into a draining level
  uint64_t emptied_after_ = 0;  // draining levels emptied after a drain

  std::mutex mutex_;  // the mirrored logs, tamper_, errors_
};

TEST_F(IndexInstallerTest, InstalledLevelsReadAsThePrimarysAcrossCompactions) {
  // Checked after every 2,000 writes, as the levels change shape.
  for (int chunk = 0; chunk < 10; ++chunk) {
    Write(2000);
    ExpectSameLevels();
  }
  for (const Status& error : errors_) ADD_FAILURE() << error.ToString();
  ASSERT_GT(region_->stats().compactions, 2u);
  // L1 was renamed into the draining level (nothing shipped) and drained.
  EXPECT_GT(renames_, 0u);
  EXPECT_EQ(installer_->stats().levels,
            region_->stats().compactions + renames_ + emptied_after_);
  EXPECT_GT(installer_->stats().pointers, installer_->stats().nodes);
  // Medium values were read through the medium log's copies, and value
  // pointers really were translated.
  EXPECT_GT(medium_values_checked_, 0u);
  EXPECT_GT(moved_pointers_, 0u);
  // The installed levels survive a reopen of the backup's installer, and
  // the replaced levels' segments were freed: the backup holds what its
  // levels and log copies name, and nothing more.
  uint64_t named = 3 + 7;  // the volume's own, the backup's own data
  for (const auto& [level, descriptor] : installer_->levels()) {
    named += descriptor.index_segments.size();
  }
  named += large_.mirror->segments().size() + medium_.mirror->segments().size();
  EXPECT_EQ(backup_.volume->stats().allocated_segments, named);
  std::unique_ptr<IndexInstaller> reopened;
  ASSERT_TRUE(IndexInstaller::Open(backup_.volume.get(), 1,
                                   {large_.mirror.get(), medium_.mirror.get()},
                                   &reopened)
                  .ok());
  EXPECT_EQ(reopened->levels().size(), installer_->levels().size());
  for (const auto& [level, descriptor] : installer_->levels()) {
    EXPECT_EQ(reopened->levels().at(level).Encode(), descriptor.Encode());
  }
}

// A node damaged in transit (one flipped byte in the middle of a shipped
// segment) gets the level refused: nothing installed, nothing leaked.
TEST_F(IndexInstallerTest, ADamagedShippedSegmentIsNeverInstalled) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tamper_ = [](std::string* segment) {
      if (segment->size() > 3 * 8192) (*segment)[8192 + 4000] ^= 0x40;
    };
  }
  Write(1400);  // about 2 MiB of KV pairs: a compaction or two
  ASSERT_GE(region_->stats().compactions, 1u);
  std::lock_guard<std::mutex> lock(mutex_);
  ASSERT_FALSE(errors_.empty());
  for (const Status& error : errors_) {
    EXPECT_NE(error.ToString().find("cannot install the shipped level"),
              std::string::npos)
        << error.ToString();
  }
  EXPECT_TRUE(installer_->levels().empty());
  EXPECT_EQ(installer_->stats().levels, 0u);
  EXPECT_EQ(backup_.volume->stats().reserved_segments, 0u);
  EXPECT_EQ(backup_.volume->stats().allocated_segments,
            3 + 7 + large_.mirror->segments().size() +
                medium_.mirror->segments().size());
}

}  // namespace
}  // namespace kvs::replication
