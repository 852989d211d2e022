#include "channel/ring_allocator.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

namespace kvs::channel {
namespace {

TEST(RingAllocatorTest, AllocatesInOrderAndWrapsChargingTheSkippedEnd) {
  RingAllocator ring(1024, 64);
  auto a = ring.Allocate(512);
  auto b = ring.Allocate(384);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->offset, 0u);
  EXPECT_EQ(b->offset, 512u);
  EXPECT_FALSE(ring.Allocate(256));  // 128 left
  ring.Release(a->id);
  // 128 at the end cannot hold 256: wrap to 0, skipping 896..1023.
  auto c = ring.Allocate(256);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->offset, 0u);
  ASSERT_TRUE(c->wrapped_from);
  EXPECT_EQ(*c->wrapped_from, 896u);
  EXPECT_EQ(ring.used(), 384u + 128u + 256u);
  // Releasing out of order keeps the space until the older one goes.
  ring.Release(c->id);
  EXPECT_EQ(ring.used(), 384u + 128u + 256u);
  ring.Release(b->id);
  EXPECT_EQ(ring.used(), 0u);
  EXPECT_EQ(ring.live(), 0u);
}

TEST(RingAllocatorTest, ExactFitEndsAtTheBufferEndWithoutWrapping) {
  RingAllocator ring(256, 64);
  auto a = ring.Allocate(256);
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->wrapped_from);
  EXPECT_FALSE(ring.Allocate(64));
  ring.Release(a->id);
  auto b = ring.Allocate(64);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->offset, 0u);
  EXPECT_FALSE(b->wrapped_from);
  EXPECT_FALSE(ring.Allocate(512));  // larger than the buffer
}

// Random allocations and out-of-order releases: live allocations never
// overlap and the accounting returns to zero.
TEST(RingAllocatorTest, RandomUseNeverOverlapsLiveSpace) {
  std::mt19937 random(11);
  RingAllocator ring(64 * 64, 64);
  std::map<uint64_t, RingAllocator::Allocation> live;
  for (int step = 0; step < 20000; ++step) {
    if (!live.empty() && (random() % 2 == 0 || live.size() > 20)) {
      auto it = live.begin();
      std::advance(it, random() % live.size());
      ring.Release(it->first);
      live.erase(it);
      continue;
    }
    const uint32_t size = 64 * (1 + random() % 12);
    auto allocation = ring.Allocate(size);
    if (!allocation) continue;
    ASSERT_LE(allocation->offset + allocation->size, ring.capacity());
    for (const auto& [id, other] : live) {
      const bool apart =
          allocation->offset + allocation->size <= other.offset ||
          other.offset + other.size <= allocation->offset;
      ASSERT_TRUE(apart) << "step " << step;
    }
    live[allocation->id] = *allocation;
  }
  for (const auto& [id, allocation] : live) ring.Release(id);
  EXPECT_EQ(ring.used(), 0u);
}

}  // namespace
}  // namespace kvs::channel
