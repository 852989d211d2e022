// The node cache: a freed segment's nodes go (EraseSegment, before the
// segment is reused), every other segment's stay.

#include "lsm/node_cache.h"

#include <gtest/gtest.h>

#include <string>

#include "alloc/device_offset.h"
#include "testing/memory_device.h"
#include "util/limits.h"

namespace kvs::lsm {
namespace {

TEST(NodeCacheTest, ErasingASegmentDropsItsNodesOnly) {
  auto device = kvs::testing::MemoryDevice::Create(16 << 20);
  auto file = device->Open();
  ASSERT_TRUE(file->Grow(8 << 20).ok());
  const size_t node = limits::io_alignment_bytes;
  NodeCache cache(file.get(), 4 << 20);
  std::string bytes;
  for (uint64_t segment : {1, 2}) {
    for (uint64_t i = 0; i < 64; ++i) {
      ASSERT_TRUE(
          cache.Read(alloc::SegmentStart(segment) + i * node, node, &bytes)
              .ok());
    }
  }
  const uint64_t cached = cache.stats().cached_bytes;
  EXPECT_EQ(cached, 128 * node);
  cache.EraseSegment(1);
  EXPECT_EQ(cache.stats().cached_bytes, 64 * node);
  const uint64_t misses = cache.stats().misses;
  for (uint64_t i = 0; i < 64; ++i) {
    ASSERT_TRUE(
        cache.Read(alloc::SegmentStart(2) + i * node, node, &bytes).ok());
  }
  EXPECT_EQ(cache.stats().misses, misses) << "segment 2 still cached";
  ASSERT_TRUE(cache.Read(alloc::SegmentStart(1), node, &bytes).ok());
  EXPECT_EQ(cache.stats().misses, misses + 1) << "segment 1 read again";
  cache.EraseSegment(7);  // nothing of it cached
  EXPECT_EQ(cache.stats().cached_bytes, 65 * node);
}

}  // namespace
}  // namespace kvs::lsm
