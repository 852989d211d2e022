#include "engine/engine.h"

#include <gtest/gtest.h>

#include "testing/memory_device.h"
#include "util/limits.h"

namespace kvs::engine {
namespace {

using testing::MemoryDevice;

EngineOptions SmallOptions() {
  EngineOptions options;
  options.sync = true;  // no flusher thread
  options.volume.grow_step_segments = 4;
  options.region.l0_size_bytes = 1 << 20;
  return options;
}

// Formatting grows the file, writes the checkpoint and only then publishes
// it with a superblock write. A crash at any point before that publication
// used to leave a non-empty file with no superblock, which every later open
// refused ("not a KVS volume: no superblock"), create_if_missing or not
// (found by the crash test, tools/crash_test.cc). Whatever write formatting
// is stopped at, opening with create_if_missing must yield a usable volume.
TEST(EngineTest, FormattingInterruptedAtAnyWriteCanBeRedone) {
  bool formatted_in_one_go = false;
  for (uint64_t written_bytes = 0; !formatted_in_one_go;
       written_bytes += limits::io_alignment_bytes) {
    SCOPED_TRACE("formatting stopped after " + std::to_string(written_bytes) +
                 " bytes");
    auto device = MemoryDevice::Create(64 * limits::segment_size_bytes);
    device->FailWritesAfter(written_bytes);
    std::unique_ptr<Engine> engine;
    formatted_in_one_go = Engine::Open(device->Open(), SmallOptions(),
                                       /*create_if_missing=*/true, &engine)
                              .ok();
    engine.reset();
    device->FailWritesAfter(std::nullopt);
    device->Crash(MemoryDevice::CrashMode::kDropUnsynced);

    const Status opened = Engine::Open(device->Open(), SmallOptions(),
                                       /*create_if_missing=*/true, &engine);
    ASSERT_TRUE(opened.ok()) << opened.ToString();
    lsm::Region* region = nullptr;
    ASSERT_TRUE(engine->CreateRegion("users", &region).ok());
    ASSERT_TRUE(region->Put("key", "value").ok());
    std::string value;
    ASSERT_TRUE(region->Get("key", &value).ok());
    EXPECT_EQ(value, "value");
  }
}

// Reformatting is only for files no superblock was ever written to: a
// formatted volume whose superblocks are damaged must be reported, not
// silently replaced by an empty one.
TEST(EngineTest, DamagedSuperblocksAreNotReformatted) {
  auto device = MemoryDevice::Create(64 * limits::segment_size_bytes);
  std::unique_ptr<Engine> engine;
  ASSERT_TRUE(Engine::Open(device->Open(), SmallOptions(),
                           /*create_if_missing=*/true, &engine)
                  .ok());
  engine.reset();
  // Bit 0 of byte 100: inside the checksummed part of either copy.
  device->FlipBit(100, 0);
  device->FlipBit(4096 + 100, 0);
  const Status opened = Engine::Open(device->Open(), SmallOptions(),
                                     /*create_if_missing=*/true, &engine);
  EXPECT_TRUE(opened.IsCorruption()) << opened.ToString();
}

}  // namespace
}  // namespace kvs::engine
