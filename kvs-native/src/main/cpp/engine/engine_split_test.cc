// Engine::SplitRegion: two daughters serve their halves of the parent's
// keys from the parent's segments (shared, not copied), keep serving
// across reopens and crashes, release what they inherited as they compact,
// and a crash at any write of a split leaves either the parent or both
// daughters, with every key.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "engine/engine.h"
#include "replication/contents_digest.h"
#include "testing/memory_device.h"
#include "util/limits.h"

namespace kvs::engine {
namespace {

using Model = std::map<std::string, std::string>;

constexpr uint64_t kSegments = 700;

EngineOptions Options() {
  EngineOptions options;
  options.region.l0_size_bytes = 256 << 10;
  options.region.growth_factor = 4;
  return options;
}

std::string Key(int i) {
  char key[16];
  std::snprintf(key, sizeof(key), "key-%05d", i);
  return key;
}

// Small, medium and large values in turn (kv_placement.h's defaults).
std::string Value(int i, int generation) {
  const size_t sizes[] = {20, 300, 4000};
  std::string value = "v" + std::to_string(generation) + ":" + Key(i) + ":";
  value.resize(sizes[i % 3], static_cast<char>('a' + (i + generation) % 26));
  return value;
}

// Writes `count` keys, overwrites half of them and deletes every
// seventh, so that the levels hold several versions, tombstones and all
// three placements; the last writes stay in L0.
void Load(lsm::Region* region, int count, int generation, Model* model) {
  for (int i = 0; i < count; ++i) {
    ASSERT_TRUE(region->Put(Key(i), Value(i, generation)).ok());
    (*model)[Key(i)] = Value(i, generation);
  }
  for (int i = 0; i < count; i += 2) {
    ASSERT_TRUE(region->Put(Key(i), Value(i, generation + 1)).ok());
    (*model)[Key(i)] = Value(i, generation + 1);
  }
  for (int i = 0; i < count; i += 7) {
    ASSERT_TRUE(region->Delete(Key(i)).ok());
    model->erase(Key(i));
  }
}

// `region` serves exactly the pairs of `model` within `bounds`: by Get,
// forward and backward scans; and nothing outside.
void ExpectServes(lsm::Region* region, const Model& model,
                  const lsm::KeyBounds& bounds) {
  Model expected;
  for (const auto& [key, value] : model) {
    std::string read;
    const Status status = region->Get(key, &read);
    if (bounds.Contains(key)) {
      expected.emplace(key, value);
      ASSERT_TRUE(status.ok())
          << region->name() << " " << key << ": " << status.ToString();
      ASSERT_EQ(read, value) << key;
    } else {
      ASSERT_TRUE(status.IsNotFound()) << region->name() << " served " << key;
    }
  }
  std::unique_ptr<lsm::RegionIterator> it = region->NewIterator(std::nullopt);
  auto next = expected.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++next) {
    ASSERT_NE(next, expected.end()) << "extra key " << it->key();
    ASSERT_EQ(it->key(), next->first);
    std::string value;
    ASSERT_TRUE(it->value(&value).ok());
    ASSERT_EQ(value, next->second) << next->first;
  }
  ASSERT_TRUE(it->status().ok());
  ASSERT_EQ(next, expected.end()) << "scan ended before " << next->first;
  auto previous = expected.rbegin();
  for (it->SeekToLast(); it->Valid(); it->Prev(), ++previous) {
    ASSERT_NE(previous, expected.rend()) << "extra key " << it->key();
    ASSERT_EQ(it->key(), previous->first);
  }
  ASSERT_EQ(previous, expected.rend());
}

// Every segment a region's levels and large log name.
std::set<uint64_t> SegmentsOf(lsm::Region* region) {
  std::set<uint64_t> segments;
  for (const lsm::LevelDescriptor& level : region->LevelDescriptors()) {
    for (uint64_t segment : level.AllSegments()) segments.insert(segment);
  }
  for (const auto& [index, segment] :
       region->LogSegments(log::LogKind::kLarge)) {
    segments.insert(segment);
  }
  return segments;
}

class EngineSplitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ =
        testing::MemoryDevice::Create(kSegments * limits::segment_size_bytes);
    Reopen(true);
  }

  void Reopen(bool create = false) {
    engine_.reset();
    ASSERT_TRUE(
        Engine::Open(device_->Open(), Options(), create, &engine_).ok());
  }

  lsm::Region* Open(const std::string& name) {
    lsm::Region* region = nullptr;
    const Status status = engine_->OpenRegion(name, &region);
    EXPECT_TRUE(status.ok()) << name << ": " << status.ToString();
    return region;
  }

  // A region "parent" loaded with `count` keys.
  lsm::Region* LoadParent(int count) {
    lsm::Region* parent = nullptr;
    EXPECT_TRUE(engine_->CreateRegion("parent", &parent).ok());
    Load(parent, count, 1, &model_);
    return parent;
  }

  Status Split(const std::string& name, const std::string& key,
               const std::string& lower, const std::string& upper) {
    lsm::Region* low = nullptr;
    lsm::Region* high = nullptr;
    return engine_->SplitRegion(name, key, lower, upper, &low, &high);
  }

  std::shared_ptr<testing::MemoryDevice> device_;
  std::unique_ptr<Engine> engine_;
  Model model_;
};

TEST_F(EngineSplitTest, DaughtersServeTheirHalvesFromSharedSegments) {
  // With the L0 merged first, the daughters inherit no L0 (which each
  // would merge at once, rewriting its share of L1): what they hold is the
  // parent's levels and large log, nothing else.
  lsm::Region* parent = LoadParent(3000);
  // (Each merge's GC may relocate large values into a new L0.)
  for (int round = 0; round < 8 && parent->stats().l0_entries > 0; ++round) {
    ASSERT_TRUE(parent->MergeAhead(30000));
    parent->WaitForCompactions();
  }
  ASSERT_EQ(parent->stats().l0_entries, 0u);
  const uint64_t before = engine_->volume()->stats().allocated_segments;
  lsm::Region* low = nullptr;
  lsm::Region* high = nullptr;
  ASSERT_TRUE(
      engine_->SplitRegion("parent", Key(1500), "low", "high", &low, &high)
          .ok());
  ASSERT_NE(low, nullptr);
  ASSERT_NE(high, nullptr);
  EXPECT_EQ(low->bounds(), (lsm::KeyBounds{"", Key(1500)}));
  EXPECT_EQ(high->bounds(), (lsm::KeyBounds{Key(1500), std::nullopt}));
  EXPECT_EQ(engine_->ListRegions(), (std::vector<std::string>{"high", "low"}));
  ExpectServes(low, model_, low->bounds());
  ExpectServes(high, model_, high->bounds());

  // Nothing was copied: the daughters name the same segments, each with a
  // reference from both; the split took no segment.
  const std::set<uint64_t> low_segments = SegmentsOf(low);
  EXPECT_EQ(low_segments, SegmentsOf(high));
  ASSERT_FALSE(low_segments.empty());
  for (uint64_t segment : low_segments) {
    EXPECT_EQ(engine_->volume()->References(segment), 2u) << segment;
  }
  EXPECT_LE(engine_->volume()->stats().allocated_segments, before);

  // Each reports its own part of the levels both hold: about a half each
  // here (the split is at the middle key), not the parent's whole size, and
  // the two parts make the whole. The part is estimated from the index
  // (entries, not bytes), and which levels hold the tombstones and the
  // overwritten versions depends on when the background merges ran: a CI
  // run under load saw 0.425 / 0.575.
  const uint64_t low_bytes = low->stats().level_kv_bytes;
  const uint64_t high_bytes = high->stats().level_kv_bytes;
  uint64_t whole = 0;
  for (const lsm::LevelDescriptor& level : low->LevelDescriptors()) {
    whole += level.kv_bytes;
  }
  EXPECT_GT(low->stats().shared_segments, 0u);
  EXPECT_NEAR(static_cast<double>(low_bytes) / whole, 0.5, 0.12);
  EXPECT_NEAR(static_cast<double>(high_bytes) / whole, 0.5, 0.12);
  EXPECT_NEAR(static_cast<double>(low_bytes + high_bytes) / whole, 1.0, 0.02);
}

// The parent's L0 is not merged at the split: the daughters take its
// tables, serve them at once, and merge their shares in the background;
// the parent's write-ahead log, shared by both, is freed once both have.
TEST_F(EngineSplitTest, DaughtersTakeTheParentsL0AndMergeItAfterTheSplit) {
  lsm::Region* parent = LoadParent(3000);
  const uint64_t written = parent->stats().last_lsn;
  ASSERT_GT(parent->stats().l0_entries, 100u);
  const std::map<uint64_t, uint64_t> parent_log =
      parent->LogSegments(log::LogKind::kSmall);
  ASSERT_FALSE(parent_log.empty());
  lsm::Region* low = nullptr;
  lsm::Region* high = nullptr;
  ASSERT_TRUE(
      engine_->SplitRegion("parent", Key(1500), "low", "high", &low, &high)
          .ok());
  ExpectServes(low, model_, low->bounds());
  ExpectServes(high, model_, high->bounds());
  // Their logs continue the parent's chain; their LSNs its.
  for (lsm::Region* daughter : {low, high}) {
    const std::map<uint64_t, uint64_t> chain =
        daughter->LogSegments(log::LogKind::kSmall);
    EXPECT_GE(daughter->stats().last_lsn, written) << daughter->name();
    for (const auto& [index, segment] : parent_log) {
      // Until its merge releases them.
      const auto held = chain.find(index);
      if (held != chain.end()) {
        EXPECT_EQ(held->second, segment);
      }
    }
  }
  ASSERT_TRUE(low->Put(Key(10), "after").ok());
  ASSERT_TRUE(high->Put(Key(2000), "after").ok());
  model_[Key(10)] = "after";
  model_[Key(2000)] = "after";
  low->WaitForCompactions();
  high->WaitForCompactions();
  for (lsm::Region* daughter : {low, high}) {
    EXPECT_EQ(daughter->stats().immutable_l0s, 0u) << daughter->name();
    EXPECT_GE(daughter->ServedNow().compacted_lsn, written) << daughter->name();
  }
  // Every segment of the parent's log went back once both merged (the last
  // one each keeps until its next merge, as a log keeps its current one).
  size_t still_held = 0;
  for (const auto& [index, segment] : parent_log) {
    if (engine_->volume()->References(segment) > 0) ++still_held;
  }
  EXPECT_LE(still_held, 1u);
  ExpectServes(low, model_, low->bounds());
  ExpectServes(high, model_, high->bounds());
  Reopen();
  ExpectServes(Open("low"), model_, Open("low")->bounds());
  ExpectServes(Open("high"), model_, Open("high")->bounds());
}

// A seal merges the L0 ahead while the region serves (HostedRegions.seal),
// so that the split has only the writes since to merge: every write before
// the call is in the levels after it, what the region serves is the same,
// and with writers going on MergeAhead returns within its bound.
TEST_F(EngineSplitTest, MergingAheadPutsEveryEarlierWriteInTheLevels) {
  // Every write before the call is in the levels after it (GC may relocate
  // records into L0 meanwhile, under new LSNs).
  const auto merged_to = [](lsm::Region* region) {
    replication::ContentsDigest digest;
    EXPECT_TRUE(replication::DigestRegion(*region, &digest).ok());
    return digest.compacted_lsn;
  };
  lsm::Region* parent = LoadParent(3000);
  ASSERT_GT(parent->stats().l0_entries, 100u);
  uint64_t written = parent->stats().last_lsn;
  ASSERT_LT(merged_to(parent), written);
  ASSERT_TRUE(parent->MergeAhead(30000));
  EXPECT_GE(merged_to(parent), written);
  ExpectServes(parent, model_, parent->bounds());

  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; !stop.load(); ++i) {
      ASSERT_TRUE(parent->Put(Key(i % 3000), std::string(200, 'w')).ok());
    }
  });
  const auto began = std::chrono::steady_clock::now();
  parent->MergeAhead(50);
  const auto took = std::chrono::steady_clock::now() - began;
  stop = true;
  writer.join();
  EXPECT_LT(took, std::chrono::seconds(5));
  written = parent->stats().last_lsn;
  ASSERT_TRUE(parent->MergeAhead(30000));
  EXPECT_GE(merged_to(parent), written);
  ASSERT_TRUE(Split("parent", Key(1500), "low", "high").ok());
}

TEST_F(EngineSplitTest, DaughtersRefuseKeysOutsideTheirBounds) {
  LoadParent(300);
  ASSERT_TRUE(Split("parent", Key(150), "low", "high").ok());
  lsm::Region* low = Open("low");
  lsm::Region* high = Open("high");
  EXPECT_EQ(low->Put(Key(150), "x").code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(high->Put(Key(149), "x").code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(high->Delete(Key(1)).code(), Status::Code::kInvalidArgument);
  ASSERT_TRUE(low->Put(Key(149), "low's").ok());
  ASSERT_TRUE(high->Put(Key(150), "high's").ok());
  model_[Key(149)] = "low's";
  model_[Key(150)] = "high's";
  ExpectServes(low, model_, low->bounds());
  ExpectServes(high, model_, high->bounds());
  // A scan's own bounds narrow the region's, never widen them.
  std::unique_ptr<lsm::RegionIterator> it =
      high->NewIterator(Key(160), std::string("a"));
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), Key(150));
}

TEST_F(EngineSplitTest, ABadSplitChangesNothing) {
  LoadParent(300);
  lsm::Region* other = nullptr;
  ASSERT_TRUE(engine_->CreateRegion("taken", &other).ok());
  EXPECT_EQ(Split("parent", Key(150), "taken", "high").code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(Split("parent", Key(150), "low", "low").code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(Split("parent", "", "low", "high").code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(Split("missing", Key(150), "low", "high").code(),
            Status::Code::kNotFound);
  ASSERT_TRUE(Split("parent", Key(150), "low", "high").ok());
  // A daughter splits only inside its bounds.
  EXPECT_EQ(Split("high", Key(100), "a", "b").code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(Split("high", Key(150), "a", "b").code(),
            Status::Code::kInvalidArgument);
  ExpectServes(Open("high"), model_, Open("high")->bounds());
}

TEST_F(EngineSplitTest, DaughtersSplitAgainAndSurviveACrash) {
  LoadParent(3000);
  ASSERT_TRUE(Split("parent", Key(1500), "low", "high").ok());
  lsm::Region* high = Open("high");
  // New writes in the daughter (its own logs), then a second split.
  for (int i = 1500; i < 3000; i += 5) {
    ASSERT_TRUE(high->Put(Key(i), Value(i, 9)).ok());
    model_[Key(i)] = Value(i, 9);
  }
  ASSERT_TRUE(Split("high", Key(2200), "mid", "top").ok());
  lsm::Region* top = Open("top");
  for (int i = 2201; i < 3000; i += 11) {
    ASSERT_TRUE(top->Put(Key(i), Value(i, 12)).ok());
    model_[Key(i)] = Value(i, 12);
  }
  ASSERT_TRUE(top->Sync().ok());
  ASSERT_TRUE(Open("low")->Sync().ok());
  engine_.reset();
  device_->Crash(testing::MemoryDevice::CrashMode::kDropUnsynced);
  Reopen();
  EXPECT_EQ(engine_->ListRegions(),
            (std::vector<std::string>{"low", "mid", "top"}));
  EXPECT_EQ(Open("mid")->bounds(), (lsm::KeyBounds{Key(1500), Key(2200)}));
  EXPECT_EQ(Open("top")->ancestors().size(), 2u);
  ExpectServes(Open("low"), model_, Open("low")->bounds());
  ExpectServes(Open("mid"), model_, Open("mid")->bounds());
  ExpectServes(Open("top"), model_, Open("top")->bounds());
}

// Compactions and GC drop a daughter's references to what it inherited,
// never its sibling's: rewriting one daughter's data leaves the other whole,
// and once both are dropped every segment is free again.
TEST_F(EngineSplitTest, InheritedSegmentsAreReleasedReferenceByReference) {
  const uint64_t empty = engine_->volume()->stats().allocated_segments;
  LoadParent(3000);
  ASSERT_TRUE(Split("parent", Key(1500), "low", "high").ok());
  lsm::Region* low = Open("low");
  lsm::Region* high = Open("high");
  // Each merges the L0 it took from the parent (and its GC may give some
  // of the parent's large-log segments up); high stays idle after.
  low->WaitForCompactions();
  high->WaitForCompactions();
  // What they still share of the parent's.
  std::set<uint64_t> inherited;
  for (const uint64_t segment : SegmentsOf(high)) {
    if (SegmentsOf(low).count(segment) != 0) inherited.insert(segment);
  }
  ASSERT_FALSE(inherited.empty());
  std::map<uint64_t, uint64_t> inherited_large;
  const std::map<uint64_t, uint64_t> high_large =
      high->LogSegments(log::LogKind::kLarge);
  for (const auto& [index, segment] : low->LogSegments(log::LogKind::kLarge)) {
    const auto held = high_large.find(index);
    if (held != high_large.end() && held->second == segment) {
      inherited_large.emplace(index, segment);
    }
  }
  // Overwrite low's keys until its compactions have rewritten its levels.
  for (int generation = 20; generation < 26; ++generation) {
    for (int i = 0; i < 1500; ++i) {
      ASSERT_TRUE(low->Put(Key(i), Value(i, generation)).ok());
      model_[Key(i)] = Value(i, generation);
    }
  }
  low->WaitForCompactions();
  // Its GC released its references to the parent's large-log segments
  // (their records outside its bounds count as its garbage): high holds
  // them alone now.
  size_t released = 0;
  for (const auto& [index, segment] : inherited_large) {
    const uint64_t references = engine_->volume()->References(segment);
    EXPECT_GE(references, 1u) << "high's segment " << segment << " freed";
    if (references == 1) ++released;
  }
  // About 6 MB of large values, less what the parent's GC freed meanwhile
  // (once 2 segments in CI, under load): at least 2.
  ASSERT_GE(inherited_large.size(), 2u);
  EXPECT_GE(released, inherited_large.size() / 2);
  size_t still_shared = 0;
  for (uint64_t segment : SegmentsOf(low)) {
    if (inherited.count(segment) != 0) ++still_shared;
  }
  EXPECT_LT(still_shared, inherited.size() / 2)
      << "low's compactions kept most of what it inherited";
  ExpectServes(low, model_, low->bounds());
  ExpectServes(Open("high"), model_, Open("high")->bounds());
  ASSERT_TRUE(engine_->DropRegion("low").ok());
  ExpectServes(Open("high"), model_, Open("high")->bounds());
  Reopen();
  ExpectServes(Open("high"), model_, Open("high")->bounds());
  ASSERT_TRUE(engine_->DropRegion("high").ok());
  EXPECT_EQ(engine_->volume()->stats().allocated_segments, empty);
  EXPECT_EQ(engine_->volume()->stats().shared_segments, 0u);
}

// A crash at any write of a split -- ending the logs, the commit, the
// daughters' merges of the L0 they took -- leaves either the parent or both
// daughters, each with every acknowledged write (a daughter whose merge did
// not happen replays its share from the parent's log). The split writes
// little before its commit: it merges nothing.
TEST_F(EngineSplitTest, ACrashAtAnyWriteLeavesTheParentOrBothDaughters) {
  int parents = 0, splits = 0, replayed = 0;
  for (uint64_t budget = 0;; budget += 4 << 10) {
    SCOPED_TRACE("writes fail after " + std::to_string(budget) + " bytes");
    device_ =
        testing::MemoryDevice::Create(kSegments * limits::segment_size_bytes);
    Reopen(true);
    model_.clear();
    lsm::Region* parent = LoadParent(1200);
    ASSERT_TRUE(parent->Sync().ok());
    // The merges the load started are done (what the split writes is its
    // own); its last writes are in the active L0.
    parent->WaitForCompactions();
    ASSERT_GT(parent->stats().l0_entries, 0u);
    device_->FailWritesAfter(budget);
    const Status split = Split("parent", Key(600), "low", "high");
    engine_.reset();
    device_->Crash(testing::MemoryDevice::CrashMode::kDropUnsynced);
    device_->FailWritesAfter(std::nullopt);
    Reopen();
    const std::vector<std::string> names = engine_->ListRegions();
    if (names == std::vector<std::string>{"parent"}) {
      ASSERT_FALSE(split.ok());
      ++parents;
      ExpectServes(Open("parent"), model_, lsm::KeyBounds{});
    } else {
      ASSERT_EQ(names, (std::vector<std::string>{"high", "low"}));
      ++splits;
      ExpectServes(Open("low"), model_, Open("low")->bounds());
      ExpectServes(Open("high"), model_, Open("high")->bounds());
      if (Open("low")->stats().recovery.replayed_writes > 0) ++replayed;
      if (split.ok()) break;
    }
    ASSERT_LT(budget, uint64_t{64} << 10)
        << "the split wrote more than its logs' ends and its commit";
  }
  EXPECT_GE(parents, 2);
  EXPECT_GE(splits, 1);
  EXPECT_GE(replayed, 1);
}

}  // namespace
}  // namespace kvs::engine
