// The engine keeps the node cache and every region's L0s within one memory
// budget: measured here as the growth of the process's resident memory
// while several regions, whose L0 sizes alone would add up to four times
// the budget, take a write load on a real volume file.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "engine/engine.h"

namespace kvs::engine {
namespace {

uint64_t ResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::stoull(line.substr(6)) * 1024;  // reported in kB
    }
  }
  return 0;
}

TEST(EngineMemoryTest, CacheAndL0sStayWithinTheBudget) {
#ifdef KVS_SANITIZER_BUILD
  GTEST_SKIP() << "AddressSanitizer's shadow memory and quarantine make "
                  "resident memory meaningless";
#endif
  char pattern[] = "/tmp/kvs-memory-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::string directory = pattern;
  constexpr uint64_t kBudget = 48ull << 20;
  constexpr int kRegions = 6;
  EngineOptions options;
  options.memory_budget_bytes = kBudget;
  options.flush_interval_ms = 10;
  options.region.l0_size_bytes = 16ull << 20;  // 6 x 2 x 16 MiB = 4x budget
  uint64_t peak_l0 = 0;
  const uint64_t before = ResidentBytes();
  uint64_t peak = before;
  {
    std::unique_ptr<Engine> engine;
    ASSERT_TRUE(
        Engine::Open(directory + "/volume", options, true, &engine).ok());
    std::vector<lsm::Region*> regions;
    for (int i = 0; i < kRegions; ++i) {
      lsm::Region* region = nullptr;
      ASSERT_TRUE(engine->CreateRegion("r" + std::to_string(i), &region).ok());
      regions.push_back(region);
    }
    std::mt19937_64 random(7);
    std::string value(200, 'v');
    // About 100 MiB of small and medium KV pairs, spread over the regions.
    for (int i = 0; i < 500'000; ++i) {
      const std::string key = "key" + std::to_string(random() % 2'000'000);
      value[i % value.size()] = static_cast<char>(random());
      ASSERT_TRUE(regions[i % kRegions]->Put(key, value).ok());
      if (i % 50'000 == 0) {
        peak = std::max(peak, ResidentBytes());
        uint64_t l0 = 0;
        for (lsm::Region* region : regions) {
          const auto memory = region->L0MemoryBytes();
          l0 += memory.active + memory.immutable;
        }
        peak_l0 = std::max(peak_l0, l0);
      }
    }
    peak = std::max(peak, ResidentBytes());
  }
  std::filesystem::remove_all(directory);
  const uint64_t growth = peak - before;
  std::printf("resident growth %.1f MiB (budget %.1f MiB), peak L0s %.1f MiB\n",
              growth / 1048576.0, kBudget / 1048576.0, peak_l0 / 1048576.0);
  // The budget bounds what grows with the data (cache, L0s). Outside it,
  // bounded by configuration: each log's 256 KiB chunk, each compaction
  // thread's buffers (up to three 2 MiB segment buffers, iterator and
  // Bloom builder state: 12 MiB allowed) and the allocator's per-thread
  // arenas and thread stacks (16 MiB allowed).
  const uint64_t fixed = kRegions * 2 * (256ull << 10) +
                         options.compaction_threads * (12ull << 20) +
                         (16ull << 20);
  EXPECT_LT(growth, kBudget + fixed);
  // The L0s may overshoot their half by what arrives within one
  // maintenance round and a compaction in flight per region.
  EXPECT_LT(peak_l0, kBudget);
}

}  // namespace
}  // namespace kvs::engine
