#include "lsm/arena.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <latch>
#include <thread>
#include <utility>
#include <vector>

#include "util/sanitizers.h"

namespace kvs::lsm {
namespace {

struct Range {
  uintptr_t begin;
  uintptr_t end;
};

// Fails if any two of `ranges` share a byte.
void ExpectDisjoint(std::vector<Range> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < ranges.size(); ++i) {
    EXPECT_LE(ranges[i - 1].end, ranges[i].begin) << "ranges overlap at " << i;
  }
}

TEST(ArenaTest, AllocatesNothingUntilFirstUse) {
  Arena arena(4096);
  EXPECT_EQ(arena.MemoryBytes(), 0u);
  arena.Allocate(1);
  EXPECT_GE(arena.MemoryBytes(), 4096u);
}

TEST(ArenaTest, AllocationsAreAlignedDisjointAndKeepTheirBytes) {
  Arena arena(4096);
  std::vector<std::pair<char*, size_t>> allocations;
  std::vector<Range> ranges;
  for (size_t i = 0; i < 2000; ++i) {
    const size_t size = 1 + (i * 37) % 1500;  // some above a quarter block
    char* memory = arena.Allocate(size);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(memory) % Arena::kAlignmentBytes, 0u);
    std::memset(memory, static_cast<int>(i & 0xff), size);
    allocations.emplace_back(memory, size);
    ranges.push_back({reinterpret_cast<uintptr_t>(memory),
                      reinterpret_cast<uintptr_t>(memory) + size});
  }
  ExpectDisjoint(ranges);
  for (size_t i = 0; i < allocations.size(); ++i) {
    const auto [memory, size] = allocations[i];
    for (size_t j = 0; j < size; ++j) {
      ASSERT_EQ(static_cast<unsigned char>(memory[j]), i & 0xff) << i;
    }
  }
}

TEST(ArenaTest, LargeAllocationGetsItsOwnBlockAndKeepsTheCurrentOne) {
  Arena arena(4096);
  char* small_first = arena.Allocate(8);
  const size_t after_small = arena.MemoryBytes();
  char* large = arena.Allocate(3000);  // > 4096 / 4
  const size_t after_large = arena.MemoryBytes();
  EXPECT_GE(after_large - after_small, 3000u);
  EXPECT_LT(after_large - after_small, 4096u);  // not a whole block plus more
  // Small allocations continue in the first block, right after the first.
  char* small_second = arena.Allocate(8);
  EXPECT_EQ(small_second, small_first + 8);
  EXPECT_EQ(arena.MemoryBytes(), after_large);
  EXPECT_TRUE(large + 3000 <= small_first || large >= small_first + 4096);
}

TEST(ArenaTest, MemoryGrowsByBlocksAndWastesUnderAQuarter) {
  Arena arena(4096);
  size_t requested = 0;
  for (int i = 0; i < 1000; ++i) {
    arena.Allocate(200);
    requested += 200;
  }
  EXPECT_GE(arena.MemoryBytes(), requested);
  // Each 4 KiB block holds 20 allocations of 200 bytes, wasting 96 of them.
  EXPECT_LE(arena.MemoryBytes(), requested * 5 / 4 + 2 * 4096);
}

TEST(ArenaTest, ConcurrentAllocationsNeverOverlap) {
  constexpr int kThreads = 4;
  constexpr int kAllocationsPerThread = 5000;
  Arena arena(4096);
  std::vector<std::vector<Range>> ranges(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < kAllocationsPerThread; ++i) {
        const size_t size = 1 + (i * 13 + t) % 1100;
        char* memory = arena.Allocate(size);
        std::memset(memory, t, size);
        ranges[t].push_back({reinterpret_cast<uintptr_t>(memory),
                             reinterpret_cast<uintptr_t>(memory) + size});
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  std::vector<Range> all;
  for (int t = 0; t < kThreads; ++t) {
    for (const Range& range : ranges[t]) {
      // Another thread writing into this range would have changed a byte.
      const auto* bytes = reinterpret_cast<const char*>(range.begin);
      for (uintptr_t j = 0; j < range.end - range.begin; ++j) {
        ASSERT_EQ(bytes[j], t);
      }
      all.push_back(range);
    }
  }
  ExpectDisjoint(std::move(all));
}

TEST(ArenaDeathTest, RejectsBlockSizeOutOfRange) {
  EXPECT_DEATH(Arena arena(16), "arena block size out of range");
}

// Without poisoning, AddressSanitizer sees a block as one allocation and
// misses a node that overruns into its neighbour.
TEST(ArenaDeathTest, OverrunIntoUnallocatedBytesIsReportedUnderAsan) {
#if defined(KVS_ADDRESS_SANITIZER)
  Arena arena(4096);
  volatile char* memory = arena.Allocate(5);
  memory[4] = 'x';  // the last byte is ours
  EXPECT_DEATH(memory[5] = 'x', "use-after-poison");
#else
  GTEST_SKIP() << "needs AddressSanitizer";
#endif
}

}  // namespace
}  // namespace kvs::lsm
