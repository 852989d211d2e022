#include "lsm/region.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>

#include "alloc/device_offset.h"
#include "log/log_format.h"
#include "testing/memory_device.h"
#include "testing/random_keys.h"
#include "util/limits.h"

namespace kvs::lsm {
namespace {

using testing::MemoryDevice;

class RegionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = MemoryDevice::Create(256 * limits::segment_size_bytes);
    ASSERT_TRUE(alloc::Volume::Create(device_->Open(), {}, &volume_).ok());
    MakeContext();
    ASSERT_TRUE(Region::Create(context_, "users", 1, options_, &region_).ok());
  }

  void MakeContext() {
    sync_group_ = std::make_unique<io::SyncGroup>(volume_->file());
    nodes_ = std::make_unique<NodeCache>(volume_->file(), 8 << 20);
    records_ = std::make_unique<RecordReader>(volume_->file());
    context_.volume = volume_.get();
    context_.sync_group = sync_group_.get();
    context_.nodes = nodes_.get();
    context_.records = records_.get();
    context_.compactions = &pool_;
  }

  // Simulates a crash: drops everything not durable, then reopens.
  void CrashAndReopen() {
    // The crash comes first: nothing the objects do on the way out (a
    // destructor's sync) reaches the device.
    device_->Crash(MemoryDevice::CrashMode::kDropUnsynced);
    region_.reset();
    nodes_.reset();
    records_.reset();
    sync_group_.reset();
    volume_.reset();
    ASSERT_TRUE(alloc::Volume::Open(device_->Open(), {}, &volume_).ok());
    MakeContext();
    const Status status =
        Region::Open(context_, "users", 1, options_, &region_);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }

  std::string GetOrStatus(std::string_view key) {
    std::string value;
    const Status status = region_->Get(key, &value);
    return status.ok() ? value : status.ToString();
  }

  std::shared_ptr<MemoryDevice> device_;
  std::unique_ptr<alloc::Volume> volume_;
  std::unique_ptr<io::SyncGroup> sync_group_;
  std::unique_ptr<NodeCache> nodes_;
  std::unique_ptr<RecordReader> records_;
  ThreadPool pool_{2};
  RegionContext context_;
  RegionOptions options_;
  std::unique_ptr<Region> region_;
};

TEST_F(RegionTest, PutGetDeleteAcrossEverySizeCategory) {
  const std::string small(10, 's'), medium(500, 'm'), large(5000, 'l');
  ASSERT_TRUE(region_->Put("small", small).ok());
  ASSERT_TRUE(region_->Put("medium", medium).ok());
  ASSERT_TRUE(region_->Put("large", large).ok());
  EXPECT_EQ(GetOrStatus("small"), small);
  EXPECT_EQ(GetOrStatus("medium"), medium);
  EXPECT_EQ(GetOrStatus("large"), large);
  EXPECT_GT(region_->stats().large_log_bytes, 5000u);
  EXPECT_LT(region_->stats().small_log_bytes, 5000u);
  // L0 counts every key and value byte written into it, the large value's
  // too (its memory holds only a pointer to it).
  EXPECT_EQ(region_->stats().l0_kv_bytes,
            5 + small.size() + 6 + medium.size() + 5 + large.size());
  ASSERT_TRUE(region_->Delete("medium").ok());
  EXPECT_TRUE(GetOrStatus("medium").rfind("NOT_FOUND", 0) == 0);
  EXPECT_TRUE(GetOrStatus("never").rfind("NOT_FOUND", 0) == 0);
  // An overwrite changes category: the newest version wins.
  ASSERT_TRUE(region_->Put("large", "now small").ok());
  EXPECT_EQ(GetOrStatus("large"), "now small");
}

TEST_F(RegionTest, LimitsAreEnforcedWithClearErrors) {
  const std::string too_long_key(limits::key_size_bytes_max + 1, 'k');
  const std::string max_key(limits::key_size_bytes_max, 'k');
  const std::string too_large_value(limits::value_size_bytes_max + 1, 'v');
  const std::string max_value(limits::value_size_bytes_max, 'v');
  Status status = region_->Put(too_long_key, "v");
  EXPECT_EQ(status.code(), Status::Code::kTooLarge);
  EXPECT_NE(status.message().find("4096"), std::string_view::npos);
  status = region_->Put("k", too_large_value);
  EXPECT_EQ(status.code(), Status::Code::kTooLarge);
  EXPECT_EQ(region_->Put("", "v").code(), Status::Code::kInvalidArgument);
  ASSERT_TRUE(region_->Put(max_key, max_value).ok());
  EXPECT_EQ(GetOrStatus(max_key), max_value);
  EXPECT_TRUE(GetOrStatus("k").rfind("NOT_FOUND", 0) == 0);
}

TEST_F(RegionTest, SyncedWritesSurviveACrashAndUnsyncedOnesMayNot) {
  ASSERT_TRUE(region_->Put("a", "1").ok());
  ASSERT_TRUE(region_->Put("big", std::string(3000, 'b')).ok());
  ASSERT_TRUE(region_->Delete("a").ok());
  ASSERT_TRUE(region_->Put("c", "3").ok());
  ASSERT_TRUE(region_->Sync().ok());
  ASSERT_TRUE(region_->Put("lost", "unsynced").ok());
  CrashAndReopen();
  EXPECT_TRUE(GetOrStatus("a").rfind("NOT_FOUND", 0) == 0);
  EXPECT_EQ(GetOrStatus("big"), std::string(3000, 'b'));
  EXPECT_EQ(GetOrStatus("c"), "3");
  EXPECT_TRUE(GetOrStatus("lost").rfind("NOT_FOUND", 0) == 0);
  // New writes continue the LSN sequence and survive the next crash too.
  ASSERT_TRUE(region_->Put("c", "4").ok());
  ASSERT_TRUE(region_->Sync().ok());
  CrashAndReopen();
  EXPECT_EQ(GetOrStatus("c"), "4");
}

TEST_F(RegionTest, SyncModeMakesEveryAcknowledgedWriteDurable) {
  region_.reset();
  context_.sync = true;
  ASSERT_TRUE(Region::Open(context_, "users", 1, options_, &region_).ok());
  ASSERT_TRUE(region_->Put("k", "v").ok());
  ASSERT_TRUE(region_->Put("big", std::string(2000, 'x')).ok());
  CrashAndReopen();
  EXPECT_EQ(GetOrStatus("k"), "v");
  EXPECT_EQ(GetOrStatus("big"), std::string(2000, 'x'));
}

TEST_F(RegionTest, RandomWritesMatchAModelAcrossCrashes) {
  testing::RandomBytes random(9);
  std::map<std::string, std::string> model;
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 400; ++i) {
      const std::string key = random.Key(1, 12);
      if (random.Uniform(5) == 0) {
        ASSERT_TRUE(region_->Delete(key).ok());
        model.erase(key);
      } else {
        const std::string value = random.Bytes(random.Uniform(2500));
        ASSERT_TRUE(region_->Put(key, value).ok());
        model[key] = value;
      }
    }
    ASSERT_TRUE(region_->Sync().ok());
    CrashAndReopen();
    for (const auto& [key, value] : model) {
      ASSERT_EQ(GetOrStatus(key), value) << "round " << round;
    }
  }
}

class RegionCompactionTest : public RegionTest {
 protected:
  void SetUp() override {
    options_.l0_size_bytes = 256 * 1024;
    options_.growth_factor = 4;
    RegionTest::SetUp();
  }

  // Writes `count` random operations (a fifth deletes) into the region and
  // the model, across every size category.
  void RandomWrites(testing::RandomBytes& random, int count,
                    std::map<std::string, std::string>* model) {
    for (int i = 0; i < count; ++i) {
      const std::string key = "k" + std::to_string(random.Uniform(3000));
      if (random.Uniform(5) == 0) {
        const Status status = region_->Delete(key);
        ASSERT_TRUE(status.ok()) << status.ToString();
        model->erase(key);
        continue;
      }
      const uint64_t category = random.Uniform(10);
      const size_t size = category < 6   ? random.Uniform(100)
                          : category < 8 ? 120 + random.Uniform(800)
                                         : 1100 + random.Uniform(3000);
      const std::string value = random.Bytes(size);
      const Status status = region_->Put(key, value);
      ASSERT_TRUE(status.ok()) << status.ToString();
      (*model)[key] = value;
    }
  }

  void ExpectModel(const std::map<std::string, std::string>& model) {
    for (int i = 0; i < 3000; ++i) {
      const std::string key = "k" + std::to_string(i);
      const auto it = model.find(key);
      std::string value;
      const Status status = region_->Get(key, &value);
      if (it == model.end()) {
        ASSERT_TRUE(status.IsNotFound()) << key << " " << status.ToString();
      } else {
        ASSERT_TRUE(status.ok()) << key << " " << status.ToString();
        ASSERT_EQ(value, it->second) << key;
      }
    }
  }
};

TEST_F(RegionCompactionTest, CompactionsBuildLevelsThatServeEveryKey) {
  testing::RandomBytes random(17);
  std::map<std::string, std::string> model;
  RandomWrites(random, 20000, &model);
  region_->WaitForCompactions();
  const RegionStats stats = region_->stats();
  EXPECT_GE(stats.compactions, 10u);
  // Data went below L1 (stale versions may since have been merged into one
  // last level, so only the deepest level is sure to hold data).
  EXPECT_GE(region_->LevelDescriptors().size(), 2u);
  EXPECT_GE(stats.level_count, 1u);
  EXPECT_GT(stats.large_garbage_bytes, 0u);  // overwritten large values
  // Compaction traffic adds up per level; merges read their inputs.
  uint64_t level_read = 0, level_written = 0;
  for (size_t i = 0; i < kStatsLevels; ++i) {
    level_read += stats.level_bytes_read[i];
    level_written += stats.level_bytes_written[i];
  }
  EXPECT_EQ(level_written, stats.compaction_bytes_written);
  EXPECT_EQ(level_read, stats.compaction_bytes_read);
  EXPECT_GT(stats.level_bytes_written[0], 0u);
  EXPECT_GT(stats.level_bytes_read[0], 0u);  // L0 merged into an L1
  EXPECT_GT(stats.medium_log_bytes, 0u);
  EXPECT_LT(stats.medium_log_bytes, stats.compaction_bytes_written);
  ExpectModel(model);
  EXPECT_GT(region_->stats().value_bytes_read, 0u);  // values behind pointers
  // Nothing leaks: every allocated segment belongs to a level or a log.
  const auto volume_stats = volume_->stats();
  EXPECT_EQ(volume_stats.reserved_segments, 0u);
  EXPECT_LT(volume_stats.allocated_segments, 40u);
}

TEST_F(RegionCompactionTest, TheIndexSaysWhereTheRegionSplitsBySize) {
  std::string key;
  bool found = true;
  ASSERT_TRUE(region_->Put("k1", "v").ok());
  ASSERT_TRUE(region_->SplitKey(&key, &found).ok());
  EXPECT_FALSE(found);  // everything in L0: the caller walks the keys

  // Distinct keys, most of them merged into the levels.
  std::map<std::string, std::string> model;
  testing::RandomBytes random(53);
  for (int i = 0; i < 6000; ++i) {
    char name[16];
    std::snprintf(name, sizeof(name), "k%05d", i);
    model[name] = random.Bytes(200);
    ASSERT_TRUE(region_->Put(name, model[name]).ok());
  }
  region_->WaitForCompactions();
  ASSERT_TRUE(region_->SplitKey(&key, &found).ok());
  ASSERT_TRUE(found);
  ASSERT_EQ(model.count(key), 1u) << key;
  const double below =
      static_cast<double>(std::distance(model.begin(), model.find(key))) /
      model.size();
  // The middle by size of every level (sequential keys: the newest, above
  // the largest level's, are in the levels above it).
  EXPECT_NEAR(below, 0.5, 0.1) << key;
}

TEST_F(RegionCompactionTest, LevelsAndLogsRecoverAfterACrash) {
  testing::RandomBytes random(23);
  std::map<std::string, std::string> model;
  for (int round = 0; round < 3; ++round) {
    RandomWrites(random, 6000, &model);
    ASSERT_TRUE(region_->Sync().ok());
    CrashAndReopen();
    ExpectModel(model);
  }
  EXPECT_GE(region_->LevelDescriptors().size(), 1u);
}

TEST_F(RegionCompactionTest, MediumValuesGoToTheMediumLogThenInPlace) {
  // Only medium KVs: before the last level they sit in the medium log.
  // Distinct keys: no stale versions, so no early merge into the last level.
  std::map<std::string, std::string> model;
  testing::RandomBytes random(31);
  for (int i = 0; i < 3000; ++i) {
    const std::string key = "k" + std::to_string(i);
    model[key] = random.Bytes(600);
    ASSERT_TRUE(region_->Put(key, model[key]).ok());
  }
  region_->WaitForCompactions();
  // The levels holding data: when the last merge went into the deepest
  // level, the one above it is empty (how the merges fell depends on when
  // the background jobs ran).
  std::vector<LevelDescriptor> levels;
  for (const LevelDescriptor& level : region_->LevelDescriptors()) {
    if (!level.empty()) levels.push_back(level);
  }
  ASSERT_FALSE(levels.empty());
  // The deepest level holds medium values in place: no medium segments.
  EXPECT_TRUE(levels.back().medium_segments.empty());
  bool some_level_has_medium_log = false;
  for (size_t i = 0; i + 1 < levels.size(); ++i) {
    some_level_has_medium_log |= !levels[i].medium_segments.empty();
  }
  if (levels.size() > 1) {
    EXPECT_TRUE(some_level_has_medium_log);
  }
  ExpectModel(model);
}

TEST_F(RegionCompactionTest, ScansMergeEverySourceAndHonourBounds) {
  testing::RandomBytes random(41);
  std::map<std::string, std::string> model;
  RandomWrites(random, 12000, &model);  // leaves data in L0 and levels
  auto scan = [&](std::optional<std::string> from,
                  std::optional<std::string> to) {
    std::vector<std::pair<std::string, std::string>> got;
    auto iterator = region_->NewIterator(to);
    if (from) {
      iterator->Seek(*from);
    } else {
      iterator->SeekToFirst();
    }
    for (; iterator->Valid(); iterator->Next()) {
      std::string value;
      EXPECT_TRUE(iterator->value(&value).ok());
      got.emplace_back(std::string(iterator->key()), value);
    }
    EXPECT_TRUE(iterator->status().ok());
    return got;
  };
  auto expected = [&](std::optional<std::string> from,
                      std::optional<std::string> to) {
    std::vector<std::pair<std::string, std::string>> want;
    for (auto it = from ? model.lower_bound(*from) : model.begin();
         it != model.end() && (!to || it->first < *to); ++it) {
      want.emplace_back(*it);
    }
    return want;
  };
  EXPECT_EQ(scan(std::nullopt, std::nullopt),
            expected(std::nullopt, std::nullopt));
  EXPECT_EQ(scan("k15", "k2"), expected("k15", "k2"));
  EXPECT_EQ(scan("k999", std::nullopt), expected("k999", std::nullopt));
  EXPECT_EQ(scan("zzz", std::nullopt).size(), 0u);
  // A snapshot: writes after creation are invisible to the iterator.
  auto iterator = region_->NewIterator(std::nullopt);
  ASSERT_TRUE(region_->Put("k0000new", "later").ok());
  iterator->Seek("k0000new");
  EXPECT_TRUE(!iterator->Valid() || iterator->key() != "k0000new");
  // Seeking backwards works.
  iterator->Seek("k5");
  iterator->Seek("k1");
  ASSERT_TRUE(iterator->Valid());
  EXPECT_EQ(iterator->key(), model.lower_bound("k1")->first);
}

// Overwrites leave older versions in the last level, holding their values;
// once those are estimated to exceed stale_fraction_max of the last level,
// everything is merged down and the large log's garbage becomes known.
class RegionStaleVersionsTest : public RegionCompactionTest {
 protected:
  void SetUp() override {
    // L1 may hold 8 L0s: half the live data below, all of it stale.
    options_.l0_size_bytes = 256 * 1024;
    options_.growth_factor = 8;
    RegionTest::SetUp();
  }
};

TEST_F(RegionStaleVersionsTest, AreMergedDownBeforeTheyPileUp) {
  constexpr int kKeys = 2000;
  constexpr size_t kValueBytes = 2000;
  testing::RandomBytes random(57);
  std::map<std::string, std::string> model;
  // The most the levels held at any checkpoint: live data plus stale
  // versions not merged away yet.
  uint64_t peak = 0;
  for (int pass = 0; pass < 4; ++pass) {
    for (int i = 0; i < kKeys; ++i) {
      const std::string key = "k" + std::to_string(i);
      model[key] = random.Bytes(kValueBytes);
      ASSERT_TRUE(region_->Put(key, model[key]).ok());
      if (pass > 0 && i % 250 == 0) {
        region_->WaitForCompactions();
        uint64_t held = 0;
        for (const auto& level : region_->LevelDescriptors()) {
          held += level.kv_bytes;
        }
        peak = std::max(peak, held);
      }
    }
  }
  region_->WaitForCompactions();
  const uint64_t live = kKeys * (kValueBytes + 5);
  std::printf("levels held at most %.2f MB for %.2f MB live\n", peak / 1e6,
              live / 1e6);
  // Stale versions stay within the configured fraction, plus what one L0
  // adds before the next check.
  EXPECT_LT(peak,
            live * (1 + options_.stale_fraction_max) + options_.l0_size_bytes);
  EXPECT_GT(region_->stats().gc_freed_segments, 0u);
  ExpectModel(model);
}

TEST_F(RegionCompactionTest, ReadPairsReturnsTheScanInBatches) {
  testing::RandomBytes random(43);
  std::map<std::string, std::string> model;
  RandomWrites(random, 12000, &model);  // values in L0, levels and logs
  const std::vector<std::pair<std::string, std::string>> want(model.begin(),
                                                              model.end());
  for (const size_t limit : {size_t{1}, size_t{7}, size_t{100}, size_t{5000}}) {
    auto iterator = region_->NewIterator(std::nullopt);
    iterator->SeekToFirst();
    std::vector<RegionIterator::Pair> pairs;
    size_t calls = 0;
    while (iterator->Valid()) {
      const size_t before = pairs.size();
      const Status status = iterator->ReadPairs(limit, 1 << 20, &pairs);
      ASSERT_TRUE(status.ok()) << status.ToString();
      ASSERT_GE(pairs.size() - before, 1u);
      ASSERT_LE(pairs.size() - before, limit);
      ++calls;
    }
    ASSERT_EQ(pairs.size(), want.size()) << "limit " << limit;
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(pairs[i].key, want[i].first) << i;
      ASSERT_EQ(pairs[i].value, want[i].second) << pairs[i].key;
    }
    EXPECT_GE(calls, (want.size() + limit - 1) / limit);
  }
  // The byte bound stops a batch early, but never before its first pair.
  auto iterator = region_->NewIterator(std::nullopt);
  iterator->SeekToFirst();
  std::vector<RegionIterator::Pair> pairs;
  ASSERT_TRUE(iterator->ReadPairs(1000, 1, &pairs).ok());
  EXPECT_EQ(pairs.size(), 1u);
  ASSERT_TRUE(iterator->ReadPairs(1000, 8192, &pairs).ok());
  EXPECT_GT(pairs.size(), 1u);
  EXPECT_LT(pairs.size(), 1001u);
  size_t bytes = 0;
  for (size_t i = 1; i + 1 < pairs.size(); ++i) {
    bytes += pairs[i].key.size() + pairs[i].value.size();
  }
  EXPECT_LT(bytes, 8192u);
}

// Large-log GC keeps up with overwrites: after three full overwrites of a
// dataset of large values, the large log holds at most 1.5x the live
// values (plus the segment being filled). Device-wide space at realistic
// scale is measured by the engine benchmark; at this scale it is dominated
// by each level's first 2 MiB segment.
TEST_F(RegionCompactionTest, LargeLogGcKeepsTheLogWithinOneAndAHalfTimesLive) {
  constexpr int kKeys = 6000;
  constexpr size_t kValueBytes = 4000;
  testing::RandomBytes random(77);
  std::map<std::string, std::string> model;
  for (int pass = 0; pass < 4; ++pass) {  // the load, then 3 overwrites
    for (int i = 0; i < kKeys; ++i) {
      // A different order each pass, so segments die only partly and
      // live records must be relocated.
      const std::string key = "k" + std::to_string((i * 7919 + pass) % kKeys);
      std::string value = random.Bytes(kValueBytes);
      ASSERT_TRUE(region_->Put(key, value).ok());
      model[key] = std::move(value);
    }
  }
  region_->WaitForCompactions();
  const RegionStats stats = region_->stats();
  const uint64_t live = kKeys * (kValueBytes + 6 + log::kRecordHeaderBytes);
  const uint64_t log_bytes =
      stats.large_log_segments * limits::segment_size_bytes;
  std::printf(
      "live %.1f MiB, large log %.1f MiB (%.2fx), device %.1f MiB, "
      "relocated %.1f MiB, freed %llu segments\n",
      live / 1048576.0, log_bytes / 1048576.0,
      static_cast<double>(log_bytes) / live,
      volume_->stats().allocated_segments * 2.0,
      stats.gc_relocated_bytes / 1048576.0,
      static_cast<unsigned long long>(stats.gc_freed_segments));
  EXPECT_GT(stats.gc_freed_segments, 20u);
  // Relocation reads whole segments: at least one per relocated segment.
  if (stats.gc_relocated_bytes > 0) {
    EXPECT_GE(stats.gc_bytes_read, limits::segment_size_bytes);
  }
  EXPECT_LE(log_bytes, live * 3 / 2 + limits::segment_size_bytes);
  // Every key's last value: a relocation racing an overwrite (the writes
  // above ran while GC relocated) never brings an older value back.
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = "k" + std::to_string(i);
    ASSERT_EQ(GetOrStatus(key), model[key]) << key;
  }
}

TEST_F(RegionCompactionTest, ReplicationHooksReportEverySegmentAndInstall) {
  region_.reset();
  std::mutex mutex;
  // Segments shipped since the last install of their level: two jobs of a
  // region may run at once, one compaction per level each, so these belong
  // to the level they name. (A segment may be shipped again later: freed
  // segments are reused.)
  std::map<size_t, std::set<uint64_t>> shipped;
  std::vector<std::pair<size_t, LevelDescriptor>> installed;
  std::map<size_t, LevelDescriptor> held;  // as a backup would
  int unshipped = 0, renames = 0, emptied_after = 0;
  context_.on_index_segment = [&](uint64_t region_id, size_t level,
                                  uint64_t segment, std::string_view bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(region_id, 1u);
    EXPECT_GT(bytes.size(), 0u);
    EXPECT_TRUE(shipped[level].insert(segment).second);  // once per job
  };
  context_.on_level_installed = [&](uint64_t, size_t level,
                                    const LevelDescriptor& descriptor,
                                    std::optional<size_t> emptied, uint64_t) {
    std::lock_guard<std::mutex> lock(mutex);
    if (emptied.has_value() && held.count(*emptied) != 0 &&
        held[*emptied].Encode() == descriptor.Encode()) {
      // L1 renamed into the draining level: nothing shipped for it.
      EXPECT_TRUE(Region::IsDrainingLevel(level)) << level;
      EXPECT_EQ(*emptied, 0u);
      EXPECT_TRUE(shipped[level].empty());
      ++renames;
    } else if (descriptor.empty() && Region::IsDrainingLevel(level)) {
      ++emptied_after;  // a draining level merged with others into L2
    } else {
      // Every index segment of the installed level was shipped first.
      for (uint64_t segment : descriptor.index_segments) {
        unshipped += shipped[level].count(segment) == 0 ? 1 : 0;
      }
      EXPECT_EQ(shipped[level].size(), descriptor.index_segments.size());
      shipped[level].clear();
    }
    if (emptied.has_value()) held.erase(*emptied);
    held[level] = descriptor;
    installed.emplace_back(level, descriptor);
  };
  ASSERT_TRUE(Region::Open(context_, "users", 1, options_, &region_).ok());
  testing::RandomBytes random(3);
  std::map<std::string, std::string> model;
  RandomWrites(random, 8000, &model);
  region_->WaitForCompactions();
  std::lock_guard<std::mutex> lock(mutex);
  ASSERT_FALSE(installed.empty());
  EXPECT_GT(renames, 0);  // L1 was drained into L2 at least once
  EXPECT_EQ(installed.size(),
            region_->stats().compactions + renames + emptied_after);
  EXPECT_EQ(unshipped, 0);
  // What the installs told is what the region holds, level by level.
  std::vector<uint64_t> told, holds;
  for (const auto& [level, descriptor] : held) {
    if (!descriptor.empty()) told.push_back(descriptor.root);
  }
  for (const auto& descriptor : region_->LevelDescriptors()) {
    if (!descriptor.empty()) holds.push_back(descriptor.root);
  }
  std::sort(told.begin(), told.end());
  std::sort(holds.begin(), holds.end());
  EXPECT_EQ(told, holds);
}

TEST_F(RegionCompactionTest,
       FullL0sWaitInLineUpToTheBoundWhileTheLevelsBelowMerge) {
  region_.reset();
  // Once armed, the first install below L1 (a job pushing L1 down, its own
  // L0 merged already) blocks until the test lets it go.
  std::mutex mutex;
  std::condition_variable changed;
  bool armed = false, blocked = false, released = false;
  context_.on_level_installed = [&](uint64_t, size_t level,
                                    const LevelDescriptor&,
                                    std::optional<size_t>, uint64_t) {
    std::unique_lock<std::mutex> lock(mutex);
    if (level == 0 || !armed || blocked) return;
    blocked = true;
    changed.notify_all();
    changed.wait(lock, [&] { return released; });
  };
  // Without the queued switches a writer would wait for the whole job.
  options_.stall_timeout_ms = 1000;
  ASSERT_TRUE(Region::Open(context_, "users", 1, options_, &region_).ok());
  const auto release = [&] {
    std::lock_guard<std::mutex> lock(mutex);
    released = true;
    changed.notify_all();
  };
  // A failed assertion returns: the blocked job must end first.
  struct Closer {
    std::function<void()> close;
    ~Closer() { close(); }
  } closer{[&] {
    release();
    region_.reset();
  }};
  const std::string value(64, 'v');
  int written = 0;
  const auto put = [&] {
    return region_->Put("key" + std::to_string(written++), value);
  };
  // Unique keys until the next L0 merged pushes L1 (4 L0s) down.
  const uint64_t l0 = options_.l0_size_bytes;
  const int per_l0 = static_cast<int>(l0 / 70);
  while (written < 40 * per_l0) {
    for (int i = 0; i < per_l0 / 4; ++i) ASSERT_TRUE(put().ok());
    region_->WaitForCompactions();
    const auto levels = region_->LevelDescriptors();
    if (!levels.empty() && levels[0].kv_bytes > 3 * l0) break;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    armed = true;
  }
  // The active L0 switches: its job merges it into L1, then blocks in L2.
  while (region_->L0MemoryBytes().immutable == 0 && written < 40 * per_l0) {
    ASSERT_TRUE(put().ok());
  }
  {
    std::unique_lock<std::mutex> lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, std::chrono::seconds(30),
                                 [&] { return blocked; }));
  }
  const uint64_t stalls = region_->stats().stalls;
  // Fill L0s until as many wait as may (they queue behind the job), and
  // write on into the next one: nobody waits.
  EXPECT_EQ(region_->stats().immutable_l0s, 0u);
  while (region_->stats().immutable_l0s < options_.immutable_l0_max &&
         written < 60 * per_l0) {
    const Status status = put();
    ASSERT_TRUE(status.ok()) << status.ToString();
  }
  ASSERT_EQ(region_->stats().immutable_l0s, options_.immutable_l0_max);
  for (int i = 0; i < 100; ++i) {
    const Status status = put();
    ASSERT_TRUE(status.ok()) << status.ToString();
  }
  EXPECT_EQ(region_->stats().stalls, stalls);
  // The bound: once the active L0 fills too, writers wait (BUSY after the
  // stall timeout, the job being held).
  Status status;
  while (status.ok() && written < 60 * per_l0) {
    status = region_->Put("key" + std::to_string(written), value);
    if (status.ok()) ++written;
  }
  EXPECT_TRUE(status.IsBusy()) << status.ToString();
  EXPECT_EQ(region_->stats().stalls, stalls + 1);
  EXPECT_EQ(region_->stats().immutable_l0s, options_.immutable_l0_max);
  release();
  // The job goes on with the queued L0s: every key is served.
  region_->WaitForCompactions();
  EXPECT_EQ(region_->stats().immutable_l0s, 0u);
  for (int i = 0; i < written; ++i) {
    ASSERT_EQ(GetOrStatus("key" + std::to_string(i)), value) << i;
  }
}

TEST_F(RegionCompactionTest, L0sThatWaitedInLineAreMergedIntoL1Together) {
  region_.reset();
  // Once armed, the first install of L1 blocks until the test lets it go:
  // the L0s that fill meanwhile wait in line.
  std::mutex mutex;
  std::condition_variable changed;
  bool armed = false, blocked = false, released = false;
  context_.on_level_installed = [&](uint64_t, size_t level,
                                    const LevelDescriptor&,
                                    std::optional<size_t>, uint64_t) {
    std::unique_lock<std::mutex> lock(mutex);
    if (level != 0 || !armed || blocked) return;
    blocked = true;
    changed.notify_all();
    changed.wait(lock, [&] { return released; });
  };
  ASSERT_TRUE(Region::Open(context_, "users", 1, options_, &region_).ok());
  const auto release = [&] {
    std::lock_guard<std::mutex> lock(mutex);
    released = true;
    changed.notify_all();
  };
  struct Closer {
    std::function<void()> close;
    ~Closer() { close(); }
  } closer{[&] {
    release();
    region_.reset();
  }};
  int filler = 0;
  // Small pairs until the active L0 switches (`immutables` wait then).
  const auto fill_until = [&](uint64_t immutables) {
    while (region_->stats().immutable_l0s < immutables && filler < 100'000) {
      ASSERT_TRUE(
          region_->Put("f" + std::to_string(filler++), std::string(90, 'f'))
              .ok());
    }
    ASSERT_EQ(region_->stats().immutable_l0s, immutables);
  };
  {
    std::lock_guard<std::mutex> lock(mutex);
    armed = true;
  }
  fill_until(1);  // its merge into L1 blocks at the install
  {
    std::unique_lock<std::mutex> lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, std::chrono::seconds(30),
                                 [&] { return blocked; }));
  }
  // The second L0: large values; the third: their new versions, and
  // deletes of ten of them.
  constexpr int kLarge = 60;
  const std::string older(2000, 'b');
  const std::string newer(2000, 'c');
  for (int i = 0; i < kLarge; ++i) {
    ASSERT_TRUE(region_->Put("big" + std::to_string(i), older).ok());
  }
  fill_until(2);
  for (int i = 0; i < kLarge; ++i) {
    const std::string key = "big" + std::to_string(i);
    ASSERT_TRUE(
        (i < 10 ? region_->Delete(key) : region_->Put(key, newer)).ok());
  }
  fill_until(3);
  const RegionStats before = region_->stats();
  release();
  region_->WaitForCompactions();
  const RegionStats after = region_->stats();
  // The blocked merge took one L0; the two that waited went in together.
  EXPECT_EQ(after.l0s_merged - before.l0s_merged, 3u);
  EXPECT_EQ(after.l0_merges - before.l0_merges, 2u);
  EXPECT_EQ(after.immutable_l0s, 0u);
  for (int i = 0; i < kLarge; ++i) {
    std::string value;
    const Status status = region_->Get("big" + std::to_string(i), &value);
    if (i < 10) {
      EXPECT_TRUE(status.IsNotFound()) << i << " " << status.ToString();
    } else {
      EXPECT_TRUE(status.ok() && value == newer)
          << i << " " << status.ToString();
    }
  }
  for (int i = 0; i < filler; ++i) {
    ASSERT_EQ(GetOrStatus("f" + std::to_string(i)), std::string(90, 'f'));
  }
  // Every older large record the newer L0 shadowed is garbage of its log.
  EXPECT_GE(after.large_garbage_bytes - before.large_garbage_bytes,
            kLarge * older.size());
}

TEST_F(RegionCompactionTest, ADamagedNodeIsReportedNeverServed) {
  std::map<std::string, std::string> model;
  for (int i = 0; i < 6000; ++i) {
    const std::string key = "k" + std::to_string(i);
    model[key] = std::string(50, static_cast<char>('a' + i % 26));
    ASSERT_TRUE(region_->Put(key, model[key]).ok());
  }
  region_->WaitForCompactions();
  auto levels = region_->LevelDescriptors();
  ASSERT_FALSE(levels.empty());
  const LevelDescriptor* level = nullptr;
  for (const auto& descriptor : levels) {
    if (!descriptor.empty()) level = &descriptor;
  }
  ASSERT_NE(level, nullptr);
  // Reopen (empty caches), damage one byte of every leaf in the level's
  // first segment, then read every key: each read returns the right value
  // or Corruption, never a wrong value.
  region_.reset();
  // Nodes come first in the segment, the Bloom filter after them; damage
  // to the filter makes the region refuse to open (tested below), so only
  // node bytes are damaged here.
  const uint64_t segment = level->index_segments.front();
  ASSERT_FALSE(level->bloom_chunks.empty());
  const uint64_t nodes_end =
      alloc::SegmentOf(level->bloom_chunks.front()) == segment
          ? alloc::OffsetInSegment(level->bloom_chunks.front())
          : limits::segment_size_bytes;
  for (uint64_t offset = 0; offset + 8192 <= nodes_end; offset += 8192) {
    device_->FlipBit(alloc::SegmentStart(segment) + offset + 100, 2);
  }
  MakeContext();
  ASSERT_TRUE(Region::Open(context_, "users", 1, options_, &region_).ok());
  int corrupt = 0;
  for (const auto& [key, value] : model) {
    std::string found;
    const Status status = region_->Get(key, &found);
    if (status.IsCorruption()) {
      ++corrupt;
    } else {
      ASSERT_TRUE(status.ok()) << key << " " << status.ToString();
      ASSERT_EQ(found, value) << key;
    }
  }
  EXPECT_GT(corrupt, 0);
  // A damaged Bloom filter is found when the level is loaded: the region
  // refuses to open, with an error naming the problem.
  region_.reset();
  device_->FlipBit(level->bloom_chunks.front() + 70, 1);
  MakeContext();
  const Status status = Region::Open(context_, "users", 1, options_, &region_);
  EXPECT_TRUE(status.IsCorruption()) << status.ToString();
}

TEST_F(RegionCompactionTest, TombstonesDisappearAtTheLastLevel) {
  std::map<std::string, std::string> model;
  for (int i = 0; i < 3000; ++i) {
    ASSERT_TRUE(region_->Put("k" + std::to_string(i), "v").ok());
  }
  for (int i = 0; i < 3000; ++i) {
    ASSERT_TRUE(region_->Delete("k" + std::to_string(i)).ok());
  }
  // Push everything down with more writes of other keys.
  testing::RandomBytes random(5);
  for (int i = 0; i < 20000; ++i) {
    ASSERT_TRUE(
        region_->Put("z" + std::to_string(i % 500), random.Bytes(60)).ok());
  }
  region_->WaitForCompactions();
  ExpectModel(model);
  uint64_t entries = 0;
  for (const auto& level : region_->LevelDescriptors()) {
    entries += level.entries;
  }
  // At most the 500 live keys plus tombstones still above the last level.
  EXPECT_LT(entries, 3500u);
}

}  // namespace
}  // namespace kvs::lsm
