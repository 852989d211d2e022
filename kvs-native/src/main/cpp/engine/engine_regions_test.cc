#include <gtest/gtest.h>

#include "engine/engine.h"
#include "testing/memory_device.h"
#include "util/limits.h"

namespace kvs::engine {
namespace {

// A volume holds at least 1,000 regions: empty ones cost no segments, and
// every region survives a reopen with its data.
TEST(EngineRegionsTest, AThousandRegionsShareOneVolume) {
  auto device =
      testing::MemoryDevice::Create(4200 * limits::segment_size_bytes);
  EngineOptions options;
  options.region.l0_size_bytes = 1 << 20;
  constexpr int kRegions = 1000;
  {
    std::unique_ptr<Engine> engine;
    ASSERT_TRUE(Engine::Open(device->Open(), options, true, &engine).ok());
    for (int i = 0; i < kRegions; ++i) {
      lsm::Region* region = nullptr;
      ASSERT_TRUE(
          engine->CreateRegion("region-" + std::to_string(i), &region).ok());
    }
    // Empty regions took no segments beyond the volume's own three.
    EXPECT_LE(engine->volume()->stats().allocated_segments, 4u);
    for (int i = 0; i < kRegions; ++i) {
      lsm::Region* region = nullptr;
      ASSERT_TRUE(
          engine->OpenRegion("region-" + std::to_string(i), &region).ok());
      ASSERT_TRUE(region->Put("key", "value of " + std::to_string(i)).ok());
      ASSERT_TRUE(region->Sync().ok());
    }
    EXPECT_EQ(engine->ListRegions().size(), size_t{kRegions});
  }
  device->Crash(testing::MemoryDevice::CrashMode::kDropUnsynced);
  std::unique_ptr<Engine> engine;
  ASSERT_TRUE(Engine::Open(device->Open(), options, false, &engine).ok());
  for (int i = 0; i < kRegions; i += 37) {
    lsm::Region* region = nullptr;
    ASSERT_TRUE(
        engine->OpenRegion("region-" + std::to_string(i), &region).ok());
    std::string value;
    ASSERT_TRUE(region->Get("key", &value).ok()) << i;
    EXPECT_EQ(value, "value of " + std::to_string(i));
  }
}

}  // namespace
}  // namespace kvs::engine
