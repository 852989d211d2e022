// Backward iteration over a region: the active L0, immutable L0s and device
// levels merged newest-first, tombstones hiding keys, bounds and the
// iterator's snapshot honoured, and direction changes at any key.

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lsm/region.h"
#include "lsm/region_iterator.h"
#include "testing/random_keys.h"
#include "testing/region_harness.h"

namespace kvs::lsm {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

class RegionReverseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegionOptions options;
    options.l0_size_bytes = 256 * 1024;
    options.growth_factor = 4;
    harness_ = std::make_unique<testing::RegionHarness>(512ull << 20, options);
    ASSERT_TRUE(harness_->status().ok()) << harness_->status().ToString();
    // Overwrites and deletes of every size over a few compactions, so that
    // keys have versions in L0 and in levels.
    testing::RandomBytes random(4242);
    for (int i = 0; i < 12000; ++i) {
      const std::string key = "k" + std::to_string(random.Uniform(3000));
      if (random.Uniform(5) == 0) {
        ASSERT_TRUE(region()->Delete(key).ok());
        model_.erase(key);
        continue;
      }
      const uint64_t category = random.Uniform(10);
      const size_t size = category < 6   ? random.Uniform(100)
                          : category < 8 ? 120 + random.Uniform(800)
                                         : 1100 + random.Uniform(3000);
      const std::string value = random.Bytes(size);
      ASSERT_TRUE(region()->Put(key, value).ok());
      model_[key] = value;
    }
    ASSERT_GE(region()->stats().compactions, 2u);
  }

  Region* region() const { return harness_->region(); }

  // Reads the pairs from the iterator's position backward to its end.
  static Pairs ReadBackward(RegionIterator* iterator) {
    Pairs got;
    for (; iterator->Valid(); iterator->Prev()) {
      std::string value;
      EXPECT_TRUE(iterator->value(&value).ok());
      got.emplace_back(std::string(iterator->key()), value);
    }
    EXPECT_TRUE(iterator->status().ok()) << iterator->status().ToString();
    return got;
  }

  // The model's pairs <= `at` (all if none) and >= `lower`, newest key
  // first, below `upper`.
  Pairs ExpectedBackward(std::optional<std::string> at,
                         std::optional<std::string> lower,
                         std::optional<std::string> upper) const {
    Pairs want;
    auto end = at ? model_.upper_bound(*at) : model_.end();
    for (auto it = std::make_reverse_iterator(end); it != model_.rend(); ++it) {
      if (upper && it->first >= *upper) continue;
      if (lower && it->first < *lower) break;
      want.emplace_back(*it);
    }
    return want;
  }

  std::unique_ptr<testing::RegionHarness> harness_;
  std::map<std::string, std::string> model_;
};

TEST_F(RegionReverseTest, ScansBackwardMatchTheModel) {
  auto all = region()->NewIterator(std::nullopt);
  all->SeekToLast();
  EXPECT_EQ(ReadBackward(all.get()),
            ExpectedBackward(std::nullopt, std::nullopt, std::nullopt));
  for (const std::string target : {"k15", "k2", "k2999", "k", "zzz", ""}) {
    auto iterator = region()->NewIterator(std::nullopt);
    iterator->SeekForPrev(target);
    EXPECT_EQ(ReadBackward(iterator.get()),
              ExpectedBackward(target, std::nullopt, std::nullopt))
        << target;
  }
}

TEST_F(RegionReverseTest, BoundsHoldBackward) {
  auto bounded = region()->NewIterator("k2", "k15");
  bounded->SeekToLast();
  EXPECT_EQ(ReadBackward(bounded.get()),
            ExpectedBackward(std::nullopt, "k15", "k2"));
  bounded->SeekForPrev("zzz");  // above the upper bound: from below it
  EXPECT_EQ(ReadBackward(bounded.get()),
            ExpectedBackward(std::nullopt, "k15", "k2"));
  bounded->SeekForPrev("k18");
  EXPECT_EQ(ReadBackward(bounded.get()), ExpectedBackward("k18", "k15", "k2"));
  // Forward with a lower bound starts at it.
  bounded->SeekToFirst();
  ASSERT_TRUE(bounded->Valid());
  EXPECT_EQ(bounded->key(), model_.lower_bound("k15")->first);
  bounded->Seek("a");
  ASSERT_TRUE(bounded->Valid());
  EXPECT_EQ(bounded->key(), model_.lower_bound("k15")->first);
}

TEST_F(RegionReverseTest, DirectionChangesAtAnyKey) {
  auto iterator = region()->NewIterator(std::nullopt);
  testing::RandomBytes random(9);
  iterator->Seek("k1");
  auto expected = model_.lower_bound("k1");
  for (int step = 0; step < 4000; ++step) {
    ASSERT_EQ(iterator->Valid(), expected != model_.end()) << step;
    if (!iterator->Valid()) {
      iterator->SeekToLast();
      expected = std::prev(model_.end());
      continue;
    }
    ASSERT_EQ(iterator->key(), expected->first) << step;
    if (random.Uniform(3) == 0 && expected != model_.begin()) {
      iterator->Prev();
      --expected;
    } else {
      iterator->Next();
      ++expected;
    }
  }
}

TEST_F(RegionReverseTest, BackwardReadsTheSnapshot) {
  // A key present before the snapshot, then changed; one deleted, then
  // written; one new: the iterator sees them as they were.
  const std::string changed = model_.rbegin()->first;
  const std::string deleted = "k1234";
  ASSERT_TRUE(region()->Delete(deleted).ok());
  model_.erase(deleted);
  auto iterator = region()->NewIterator(std::nullopt);
  ASSERT_TRUE(region()->Put(changed, "later").ok());
  ASSERT_TRUE(region()->Put(deleted, "later").ok());
  ASSERT_TRUE(region()->Put("k99999", "later").ok());
  ASSERT_TRUE(region()->Put("k0", "later").ok());
  iterator->SeekToLast();
  EXPECT_EQ(ReadBackward(iterator.get()),
            ExpectedBackward(std::nullopt, std::nullopt, std::nullopt));
  iterator->SeekForPrev(deleted);
  ASSERT_TRUE(iterator->Valid());
  EXPECT_EQ(iterator->key(), std::prev(model_.upper_bound(deleted))->first);
}

}  // namespace
}  // namespace kvs::lsm
