#include "lsm/region.h"

#include <gtest/gtest.h>

#include <map>

#include "testing/memory_device.h"
#include "testing/random_keys.h"
#include "util/limits.h"

namespace kvs::lsm {
namespace {

using testing::MemoryDevice;

class RegionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = MemoryDevice::Create(256 * limits::segment_size_bytes);
    ASSERT_TRUE(alloc::Volume::Create(device_->Open(), {}, &volume_).ok());
    MakeContext();
    ASSERT_TRUE(Region::Create(context_, "users", 1, options_, &region_).ok());
  }

  void MakeContext() {
    sync_group_ = std::make_unique<io::SyncGroup>(volume_->file());
    context_.volume = volume_.get();
    context_.sync_group = sync_group_.get();
  }

  // Simulates a crash: drops everything not durable, then reopens.
  void CrashAndReopen() {
    region_.reset();
    sync_group_.reset();
    volume_.reset();
    device_->Crash(MemoryDevice::CrashMode::kDropUnsynced);
    ASSERT_TRUE(alloc::Volume::Open(device_->Open(), {}, &volume_).ok());
    MakeContext();
    const Status status =
        Region::Open(context_, "users", 1, options_, &region_);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }

  std::string GetOrStatus(std::string_view key) {
    std::string value;
    const Status status = region_->Get(key, &value);
    return status.ok() ? value : status.ToString();
  }

  std::shared_ptr<MemoryDevice> device_;
  std::unique_ptr<alloc::Volume> volume_;
  std::unique_ptr<io::SyncGroup> sync_group_;
  RegionContext context_;
  RegionOptions options_;
  std::unique_ptr<Region> region_;
};

TEST_F(RegionTest, PutGetDeleteAcrossEverySizeCategory) {
  const std::string small(10, 's'), medium(500, 'm'), large(5000, 'l');
  ASSERT_TRUE(region_->Put("small", small).ok());
  ASSERT_TRUE(region_->Put("medium", medium).ok());
  ASSERT_TRUE(region_->Put("large", large).ok());
  EXPECT_EQ(GetOrStatus("small"), small);
  EXPECT_EQ(GetOrStatus("medium"), medium);
  EXPECT_EQ(GetOrStatus("large"), large);
  EXPECT_GT(region_->stats().large_log_bytes, 5000u);
  EXPECT_LT(region_->stats().small_log_bytes, 5000u);
  ASSERT_TRUE(region_->Delete("medium").ok());
  EXPECT_TRUE(region_->Get("medium", nullptr).IsNotFound());
  EXPECT_TRUE(region_->Get("never", nullptr).IsNotFound());
  // An overwrite changes category: the newest version wins.
  ASSERT_TRUE(region_->Put("large", "now small").ok());
  EXPECT_EQ(GetOrStatus("large"), "now small");
}

TEST_F(RegionTest, LimitsAreEnforcedWithClearErrors) {
  const std::string too_long_key(limits::key_size_bytes_max + 1, 'k');
  const std::string max_key(limits::key_size_bytes_max, 'k');
  const std::string too_large_value(limits::value_size_bytes_max + 1, 'v');
  const std::string max_value(limits::value_size_bytes_max, 'v');
  Status status = region_->Put(too_long_key, "v");
  EXPECT_EQ(status.code(), Status::Code::kTooLarge);
  EXPECT_NE(status.message().find("4096"), std::string_view::npos);
  status = region_->Put("k", too_large_value);
  EXPECT_EQ(status.code(), Status::Code::kTooLarge);
  EXPECT_EQ(region_->Put("", "v").code(), Status::Code::kInvalidArgument);
  ASSERT_TRUE(region_->Put(max_key, max_value).ok());
  EXPECT_EQ(GetOrStatus(max_key), max_value);
  EXPECT_TRUE(region_->Get("k", nullptr).IsNotFound());
}

TEST_F(RegionTest, SyncedWritesSurviveACrashAndUnsyncedOnesMayNot) {
  ASSERT_TRUE(region_->Put("a", "1").ok());
  ASSERT_TRUE(region_->Put("big", std::string(3000, 'b')).ok());
  ASSERT_TRUE(region_->Delete("a").ok());
  ASSERT_TRUE(region_->Put("c", "3").ok());
  ASSERT_TRUE(region_->Sync().ok());
  ASSERT_TRUE(region_->Put("lost", "unsynced").ok());
  CrashAndReopen();
  EXPECT_TRUE(region_->Get("a", nullptr).IsNotFound());
  EXPECT_EQ(GetOrStatus("big"), std::string(3000, 'b'));
  EXPECT_EQ(GetOrStatus("c"), "3");
  EXPECT_TRUE(region_->Get("lost", nullptr).IsNotFound());
  // New writes continue the LSN sequence and survive the next crash too.
  ASSERT_TRUE(region_->Put("c", "4").ok());
  ASSERT_TRUE(region_->Sync().ok());
  CrashAndReopen();
  EXPECT_EQ(GetOrStatus("c"), "4");
}

TEST_F(RegionTest, SyncModeMakesEveryAcknowledgedWriteDurable) {
  region_.reset();
  context_.sync = true;
  ASSERT_TRUE(Region::Open(context_, "users", 1, options_, &region_).ok());
  ASSERT_TRUE(region_->Put("k", "v").ok());
  ASSERT_TRUE(region_->Put("big", std::string(2000, 'x')).ok());
  CrashAndReopen();
  EXPECT_EQ(GetOrStatus("k"), "v");
  EXPECT_EQ(GetOrStatus("big"), std::string(2000, 'x'));
}

TEST_F(RegionTest, RandomWritesMatchAModelAcrossCrashes) {
  testing::RandomBytes random(9);
  std::map<std::string, std::string> model;
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 400; ++i) {
      const std::string key = random.Key(1, 12);
      if (random.Uniform(5) == 0) {
        ASSERT_TRUE(region_->Delete(key).ok());
        model.erase(key);
      } else {
        const std::string value = random.Bytes(random.Uniform(2500));
        ASSERT_TRUE(region_->Put(key, value).ok());
        model[key] = value;
      }
    }
    ASSERT_TRUE(region_->Sync().ok());
    CrashAndReopen();
    for (const auto& [key, value] : model) {
      ASSERT_EQ(GetOrStatus(key), value) << "round " << round;
    }
  }
}

}  // namespace
}  // namespace kvs::lsm
