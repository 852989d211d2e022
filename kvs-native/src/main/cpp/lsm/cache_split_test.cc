// The adaptive cache split: ghost lists remember what a cache evicted, a
// miss on one counts as a ghost hit, caches shrink at once when their
// capacity does, and the split moves toward the cache with clearly more
// ghost hits, within its bounds.

#include "lsm/cache_split.h"

#include <gtest/gtest.h>

#include <string>

#include "alloc/device_offset.h"
#include "lsm/ghost_list.h"
#include "lsm/node_cache.h"
#include "lsm/value_cache.h"
#include "testing/memory_device.h"
#include "util/limits.h"

namespace kvs::lsm {
namespace {

TEST(GhostListTest, RemembersEvictedKeysUntilDisplaced) {
  GhostList ghost;
  EXPECT_FALSE(ghost.Take(1)) << "no room";
  ghost.Add(1);
  EXPECT_FALSE(ghost.Take(1));
  ghost.set_capacity(1000);
  EXPECT_EQ(ghost.capacity(), 1024u);
  for (uint64_t key = 0; key < 100; ++key) ghost.Add(key * 4096);
  size_t remembered = 0;
  for (uint64_t key = 0; key < 100; ++key) remembered += ghost.Take(key * 4096);
  EXPECT_GE(remembered, 90u) << "few collisions at a tenth full";
  EXPECT_FALSE(ghost.Take(0)) << "taken once";
  ghost.Add(7);
  ghost.set_capacity(1000);  // the same room: kept
  EXPECT_TRUE(ghost.Take(7));
  ghost.Add(7);
  ghost.set_capacity(0);
  EXPECT_FALSE(ghost.Take(7));
}

TEST(CacheSplitTest, MovesTowardClearlyMoreGhostHitsWithinBounds) {
  EXPECT_DOUBLE_EQ(NextValueShare(0.4, 10, 1000), 0.42);
  EXPECT_DOUBLE_EQ(NextValueShare(0.4, 1000, 10), 0.38);
  EXPECT_DOUBLE_EQ(NextValueShare(0.4, 100, 110), 0.4) << "not clearly more";
  EXPECT_DOUBLE_EQ(NextValueShare(0.4, 0, 20), 0.4) << "too few to judge";
  EXPECT_DOUBLE_EQ(NextValueShare(0.05, 1000, 0), 0.05) << "lower bound";
  EXPECT_DOUBLE_EQ(NextValueShare(0.6, 0, 1000), 0.6) << "upper bound";
}

TEST(CacheSplitTest, AValueEvictedAndWantedAgainIsAGhostHit) {
  ValueCache cache(16 * 1024);  // 1 KiB a shard
  cache.SetCapacity(16 * 1024, 1 << 20);
  const uint64_t at = alloc::SegmentStart(9);
  const std::string value(600, 'v');
  cache.Put(at, 600, "a", value);
  cache.Put(at + 1024, 600, "b", value);  // same shard: "a" is evicted
  std::string got;
  EXPECT_FALSE(cache.Get(at, 600, "a", &got));
  cache.Put(at, 600, "a", value);  // read again after the miss
  EXPECT_EQ(cache.stats().ghost_hits, 1u);
  // Shrinking evicts at once, into the ghost list.
  cache.SetCapacity(0, 1 << 20);
  EXPECT_EQ(cache.stats().cached_bytes, 0u);
  EXPECT_EQ(cache.stats().capacity_bytes, 0u);
  cache.Put(at + 1024, 600, "b", value);
  EXPECT_EQ(cache.stats().ghost_hits, 2u);
  EXPECT_FALSE(cache.Get(at + 1024, 600, "b", &got)) << "nothing kept at 0";
}

TEST(CacheSplitTest, ANodeEvictedAndReadAgainIsAGhostHit) {
  auto device = kvs::testing::MemoryDevice::Create(8 << 20);
  auto file = device->Open();
  ASSERT_TRUE(file->Grow(4 << 20).ok());
  const size_t node = limits::io_alignment_bytes;
  NodeCache cache(file.get(), 16 * node);  // one node a shard
  cache.SetCapacity(16 * node, 64 * node);
  // Offsets in one shard: the cache mixes the block number.
  std::vector<uint64_t> same_shard;
  for (uint64_t block = 1; same_shard.size() < 2; ++block) {
    if (((block * 0x9e3779b97f4a7c15ull) >> 60) ==
        ((1 * 0x9e3779b97f4a7c15ull) >> 60)) {
      same_shard.push_back(block * node);
    }
  }
  std::string bytes;
  ASSERT_TRUE(cache.Read(same_shard[0], node, &bytes).ok());
  ASSERT_TRUE(cache.Read(same_shard[1], node, &bytes).ok());  // evicts [0]
  EXPECT_EQ(cache.stats().ghost_hits, 0u);
  ASSERT_TRUE(cache.Read(same_shard[0], node, &bytes).ok());
  EXPECT_EQ(cache.stats().ghost_hits, 1u);
  cache.SetCapacity(0, 64 * node);
  EXPECT_EQ(cache.stats().cached_bytes, 0u);
  const uint64_t misses = cache.stats().misses;
  ASSERT_TRUE(cache.Read(same_shard[0], node, &bytes).ok());
  EXPECT_EQ(cache.stats().misses, misses + 1) << "nothing kept at 0";
}

}  // namespace
}  // namespace kvs::lsm
