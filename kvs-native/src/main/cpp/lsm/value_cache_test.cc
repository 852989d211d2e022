// The value cache: a hit needs the same offset, size and key; the capacity
// bounds what it keeps; a segment's entries go before it is reused.

#include "lsm/value_cache.h"

#include <gtest/gtest.h>

#include <string>

#include "alloc/device_offset.h"

namespace kvs::lsm {
namespace {

TEST(ValueCacheTest, HitsOnlyTheSameRecordOfTheSameKey) {
  ValueCache cache(1 << 20);
  const uint64_t at = alloc::SegmentStart(7) + 4096;
  cache.Put(at, 40, "key", "value");
  std::string value;
  ASSERT_TRUE(cache.Get(at, 40, "key", &value));
  EXPECT_EQ(value, "value");
  EXPECT_FALSE(cache.Get(at, 41, "key", &value));      // another size
  EXPECT_FALSE(cache.Get(at, 40, "other", &value));    // another key
  EXPECT_FALSE(cache.Get(at + 1, 40, "key", &value));  // another record
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 3u);
}

TEST(ValueCacheTest, AReusedSegmentServesNothingOfItsLastUse) {
  ValueCache cache(1 << 20);
  const uint64_t in_seven = alloc::SegmentStart(7) + 100;
  const uint64_t in_eight = alloc::SegmentStart(8) + 100;
  cache.Put(in_eight, 40, "k", "kept");
  const uint64_t kept_bytes = cache.stats().cached_bytes;
  for (uint64_t i = 0; i < 100; ++i) {
    cache.Put(in_seven + i * 64, 40, "k" + std::to_string(i), "old");
  }
  cache.Put(in_seven, 40, "k0", "old again");  // replaces an entry
  cache.EraseSegment(7);
  std::string value;
  for (uint64_t i = 0; i < 100; ++i) {
    EXPECT_FALSE(
        cache.Get(in_seven + i * 64, 40, "k" + std::to_string(i), &value));
  }
  ASSERT_TRUE(cache.Get(in_eight, 40, "k", &value));
  EXPECT_EQ(value, "kept");
  EXPECT_EQ(cache.stats().cached_bytes, kept_bytes);  // nothing left behind
  cache.EraseSegment(7);                              // again: nothing to do
  cache.Put(in_seven, 40, "k", "new");
  ASSERT_TRUE(cache.Get(in_seven, 40, "k", &value));
  EXPECT_EQ(value, "new");
}

TEST(ValueCacheTest, StaysWithinItsCapacityAndSkipsLargeValues) {
  const size_t capacity = 256u << 10;
  ValueCache cache(capacity);
  const std::string value(1000, 'v');
  for (uint64_t i = 0; i < 10'000; ++i) {
    cache.Put(alloc::SegmentStart(i % 64) + i * 1024, 1030, "k", value);
  }
  EXPECT_LE(cache.stats().cached_bytes, capacity);
  EXPECT_GT(cache.stats().cached_bytes, capacity / 2);
  const std::string large(ValueCache::kValueBytesMax + 1, 'l');
  cache.Put(alloc::SegmentStart(100), 20000, "big", large);
  std::string got;
  EXPECT_FALSE(cache.Get(alloc::SegmentStart(100), 20000, "big", &got));
}

}  // namespace
}  // namespace kvs::lsm
