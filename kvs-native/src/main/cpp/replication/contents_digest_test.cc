#include "replication/contents_digest.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "testing/random_keys.h"
#include "testing/region_harness.h"
#include "util/limits.h"

namespace kvs::replication {
namespace {

using testing::RegionHarness;

constexpr uint64_t kCapacityBytes = 256 * limits::segment_size_bytes;

lsm::RegionOptions SmallL0() {
  lsm::RegionOptions options;
  options.l0_size_bytes = 1 << 20;
  return options;
}

uint64_t DigestOf(const std::map<std::string, std::string>& pairs) {
  PairDigest digest;
  for (const auto& [key, value] : pairs) {
    digest.Add(PairDigest::Hash(key, value));
  }
  return digest.digest();
}

// Writes every size category, overwrites and deletes into `region`, and
// returns what it holds.
std::map<std::string, std::string> Load(lsm::Region* region, int operations) {
  std::map<std::string, std::string> expected;
  testing::RandomBytes random(3);
  for (int i = 0; i < operations; ++i) {
    const std::string key = "key" + std::to_string(random.Uniform(1500)) +
                            random.Bytes(2);  // '\x00' and '\xff' too
    if (i % 11 == 0) {
      EXPECT_TRUE(region->Delete(key).ok());
      expected.erase(key);
      continue;
    }
    const std::string value = random.Bytes(i % 3 == 0   ? 10
                                           : i % 3 == 1 ? 600
                                                        : 3000);
    EXPECT_TRUE(region->Put(key, value).ok());
    expected[key] = value;
  }
  return expected;
}

TEST(ContentsDigestTest, SamePairsSameDigestWhereverTheyAreStored) {
  RegionHarness compacted(kCapacityBytes, SmallL0());
  RegionHarness fresh(kCapacityBytes, {});  // a 64 MiB L0: never compacted
  ASSERT_TRUE(compacted.status().ok() && fresh.status().ok());
  const auto expected = Load(compacted.region(), 4000);
  compacted.region()->WaitForCompactions();
  // The same pairs written once each, into L0 only.
  for (const auto& [key, value] : expected) {
    ASSERT_TRUE(fresh.region()->Put(key, value).ok());
  }
  ContentsDigest ours, theirs;
  ASSERT_TRUE(DigestRegion(*compacted.region(), &ours).ok());
  ASSERT_TRUE(DigestRegion(*fresh.region(), &theirs).ok());
  EXPECT_EQ(ours.digest, DigestOf(expected));
  EXPECT_EQ(theirs.digest, ours.digest);
  EXPECT_EQ(ours.pairs, expected.size());
  EXPECT_EQ(theirs.pairs, expected.size());
  // Where they are differs, and the counts say so.
  EXPECT_GT(ours.levels, 0u);
  EXPECT_GT(ours.level_pairs, 0u);
  EXPECT_GT(ours.compacted_lsn, 0u);
  EXPECT_GE(ours.last_lsn, 4000u);  // GC relocations take LSNs too
  EXPECT_EQ(ours.past_levels, compacted.region()->stats().l0_entries);
  EXPECT_EQ(theirs.past_levels, expected.size());
  EXPECT_EQ(theirs.levels, 0u);
  EXPECT_EQ(theirs.level_pairs, 0u);

  // One value different, or one pair missing: another digest.
  const std::string key = expected.begin()->first;
  ASSERT_TRUE(fresh.region()->Put(key, "changed").ok());
  ASSERT_TRUE(DigestRegion(*fresh.region(), &theirs).ok());
  EXPECT_NE(theirs.digest, ours.digest);
  ASSERT_TRUE(fresh.region()->Delete(key).ok());
  ASSERT_TRUE(DigestRegion(*fresh.region(), &theirs).ok());
  EXPECT_NE(theirs.digest, ours.digest);
  EXPECT_EQ(theirs.pairs, expected.size() - 1);
  // And the same after a restart, replayed from the logs.
  compacted.CloseAndReopen();
  ASSERT_TRUE(compacted.status().ok());
  ContentsDigest reopened;
  ASSERT_TRUE(DigestRegion(*compacted.region(), &reopened).ok());
  EXPECT_EQ(reopened.digest, ours.digest);
  EXPECT_EQ(reopened.last_lsn, ours.last_lsn);
}

TEST(ContentsDigestTest, RecordsPastTheLevelsAreMergedOverThem) {
  RegionHarness harness(kCapacityBytes, SmallL0());
  ASSERT_TRUE(harness.status().ok());
  auto expected = Load(harness.region(), 3000);
  harness.region()->WaitForCompactions();
  harness.region()->RequestCompaction();
  harness.region()->WaitForCompactions();
  const lsm::Region::Served served = harness.region()->ServedNow();
  uint64_t level_pairs = 0, levels = 0;
  ASSERT_TRUE(CountLevelPairs(served.levels, {}, &level_pairs, &levels).ok());
  ASSERT_EQ(level_pairs, expected.size());  // everything is in the levels
  // Newer records: a put replaces a level's pair, a delete hides one, a new
  // key joins.
  auto first = expected.begin();
  auto second = std::next(first);
  std::map<std::string, Overlay> overlay;
  overlay[first->first] = {true, PairDigest::Hash(first->first, "new")};
  overlay[second->first] = {false, 0};
  overlay["\xff new key"] = {true, PairDigest::Hash("\xff new key", "v")};
  first->second = "new";
  expected.erase(second);
  expected["\xff new key"] = "v";
  ContentsDigest merged;
  ASSERT_TRUE(DigestMerged(harness.volume()->file(), served.levels, overlay, {},
                           &merged)
                  .ok());
  EXPECT_EQ(merged.digest, DigestOf(expected));
  EXPECT_EQ(merged.pairs, expected.size());
  EXPECT_EQ(merged.level_pairs, level_pairs);
  EXPECT_EQ(merged.levels, levels);
}

}  // namespace
}  // namespace kvs::replication
