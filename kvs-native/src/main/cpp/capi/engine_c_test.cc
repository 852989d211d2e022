// The engine part of the C ABI, as a C client uses it.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "kvs/kvs.h"

namespace {

// A new field must be compared in OptionsInitSetsEveryField below; this
// fails to compile until the size is updated, as a reminder.
static_assert(sizeof(kvs_engine_options) == 48,
              "kvs_engine_options changed: compare the new field below");

// A caller's options struct starts as whatever its memory held. Filling two
// structs from opposite garbage must give the same defaults in every field
// (kvs_engine_options_init once left memory_budget_bytes unset, so opening
// with the defaults failed or used a random budget; found by the crash test,
// tools/crash_test.cc).
TEST(EngineCApiTest, OptionsInitSetsEveryField) {
  kvs_engine_options zeros, ones;
  std::memset(&zeros, 0x00, sizeof(zeros));
  std::memset(&ones, 0xff, sizeof(ones));
  kvs_engine_options_init(&zeros);
  kvs_engine_options_init(&ones);
  EXPECT_EQ(zeros.sync, ones.sync);
  EXPECT_EQ(zeros.flush_interval_ms, ones.flush_interval_ms);
  EXPECT_EQ(zeros.direct_io, ones.direct_io);
  EXPECT_EQ(zeros.l0_size_bytes, ones.l0_size_bytes);
  EXPECT_EQ(zeros.growth_factor, ones.growth_factor);
  EXPECT_EQ(zeros.small_kv_bytes_max, ones.small_kv_bytes_max);
  EXPECT_EQ(zeros.medium_kv_bytes_max, ones.medium_kv_bytes_max);
  EXPECT_EQ(zeros.memory_budget_bytes, ones.memory_budget_bytes);
}

// The defaults, given explicitly or as NULL, open a volume.
TEST(EngineCApiTest, DefaultOptionsOpenAVolume) {
  std::string directory = ::testing::TempDir() + "/kvs-capi-XXXXXX";
  ASSERT_NE(::mkdtemp(directory.data()), nullptr);
  const std::string path = directory + "/volume";
  kvs_engine_options options;
  std::memset(&options, 0xff, sizeof(options));
  kvs_engine_options_init(&options);
  kvs_engine* engine = nullptr;
  kvs_status status = kvs_engine_open(path.c_str(), &options,
                                      /*create_if_missing=*/1, &engine);
  EXPECT_EQ(status, KVS_OK) << kvs_last_error_message();
  if (status == KVS_OK) kvs_engine_close(engine);
  status =
      kvs_engine_open(path.c_str(), nullptr, /*create_if_missing=*/0, &engine);
  EXPECT_EQ(status, KVS_OK) << kvs_last_error_message();
  if (status == KVS_OK) kvs_engine_close(engine);
  std::error_code ignored;
  std::filesystem::remove_all(directory, ignored);
}

// Conditional writes through the C ABI: a compare-and-set writes only over
// the value it expected and tells the value it found otherwise; increments
// from several threads, racing plain puts of the same key stripe, lose
// nothing.
TEST(EngineCApiTest, ConditionalWritesAreAtomic) {
  std::string directory = ::testing::TempDir() + "/kvs-capi-XXXXXX";
  ASSERT_NE(::mkdtemp(directory.data()), nullptr);
  const std::string path = directory + "/volume";
  kvs_engine* engine = nullptr;
  ASSERT_EQ(kvs_engine_open(path.c_str(), nullptr, 1, &engine), KVS_OK)
      << kvs_last_error_message();
  kvs_region* region = nullptr;
  ASSERT_EQ(kvs_region_create(engine, "r", 1, &region), KVS_OK);

  std::string found;
  const kvs_value_sink sink = [](void* context, const void* value,
                                 size_t size) {
    static_cast<std::string*>(context)->assign(static_cast<const char*>(value),
                                               size);
  };
  int applied = -1;
  ASSERT_EQ(kvs_compare_and_set(region, "k", 1, nullptr, 0, "v1", 2, &applied,
                                sink, &found),
            KVS_OK);
  EXPECT_EQ(applied, 1);
  ASSERT_EQ(kvs_compare_and_set(region, "k", 1, nullptr, 0, "v2", 2, &applied,
                                sink, &found),
            KVS_OK);
  EXPECT_EQ(applied, 0);
  EXPECT_EQ(found, "v1");
  ASSERT_EQ(kvs_compare_and_set(region, "k", 1, "v1", 2, "v2", 2, &applied,
                                sink, &found),
            KVS_OK);
  EXPECT_EQ(applied, 1);
  ASSERT_EQ(kvs_compare_and_set(region, "k", 1, "v2", 2, nullptr, 0, &applied,
                                nullptr, nullptr),
            KVS_OK);
  EXPECT_EQ(applied, 1);                                  // deleted
  const std::string too_big((size_t{1} << 20) + 1, 'x');  // past 1 MiB
  EXPECT_NE(kvs_compare_and_set(region, "k", 1, nullptr, 0, too_big.data(),
                                too_big.size(), &applied, nullptr, nullptr),
            KVS_OK);

  constexpr int kThreads = 4;
  constexpr int kEach = 300;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([region, t] {
      for (int i = 0; i < kEach; ++i) {
        int64_t sum = 0;
        ASSERT_EQ(kvs_increment(region, "counter", 7, 1, &sum), KVS_OK);
        const std::string other = "p" + std::to_string(t);
        ASSERT_EQ(kvs_put(region, other.data(), other.size(), "x", 1), KVS_OK);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  int64_t sum = 0;
  ASSERT_EQ(kvs_increment(region, "counter", 7, 0, &sum), KVS_OK);
  EXPECT_EQ(sum, kThreads * kEach);
  EXPECT_EQ(kvs_increment(region, "p0", 2, 1, &sum), KVS_INVALID_ARGUMENT)
      << "a 1-byte value is no counter";
  kvs_engine_close(engine);
  std::error_code ignored;
  std::filesystem::remove_all(directory, ignored);
}

}  // namespace
