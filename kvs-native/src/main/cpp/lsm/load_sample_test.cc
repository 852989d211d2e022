// The load sample: one request in kEvery leaves its key, the ring keeps the
// last kKeys, and the median splits the sampled requests in half within
// the region's bounds -- not the region's keys: a hot range of a few keys
// pulls it there.

#include "lsm/load_sample.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace kvs::lsm {
namespace {

std::string Key(int i) {
  char buffer[16];
  std::snprintf(buffer, sizeof(buffer), "k%06d", i);
  return buffer;
}

TEST(LoadSampleTest, OneRequestInEveryKeepsItsKeyAndTheRingKeepsTheLast) {
  LoadSample sample;
  for (uint64_t count = 0; count < LoadSample::kEvery * 10; ++count) {
    sample.Note(count, Key(static_cast<int>(count)));
  }
  EXPECT_EQ(sample.size(), 10u);
  for (uint64_t count = 0; count < LoadSample::kEvery * LoadSample::kKeys * 3;
       ++count) {
    sample.Note(count, Key(static_cast<int>(count)));
  }
  EXPECT_EQ(sample.size(), LoadSample::kKeys);
  // Only the last pass's keys are left: their median is the last pass's.
  std::string median;
  ASSERT_TRUE(sample.Median(KeyBounds{}, &median));
  const uint64_t last_pass = LoadSample::kEvery * LoadSample::kKeys * 2;
  EXPECT_GE(median, Key(static_cast<int>(last_pass)));
}

TEST(LoadSampleTest, TheMedianFollowsTheRequestsNotTheKeys) {
  LoadSample sample;
  uint64_t count = 0;
  // A quarter of the requests spread over k000000..k000999, three quarters
  // on the hot k000900..k000909.
  for (int i = 0; i < 4000; ++i) {
    const std::string key = i % 4 == 0 ? Key(i / 4) : Key(900 + i % 10);
    for (uint64_t n = 0; n < LoadSample::kEvery; ++n) sample.Note(count++, key);
  }
  std::string median;
  ASSERT_TRUE(sample.Median(KeyBounds{}, &median));
  EXPECT_GE(median, Key(900));
  EXPECT_LE(median, Key(909));
}

TEST(LoadSampleTest, OnlyKeysInsideTheBoundsCountAndTooFewSayNothing) {
  LoadSample sample;
  uint64_t count = 0;
  for (int i = 0; i < 1000; ++i)
    sample.Note(count++ * LoadSample::kEvery, Key(i));
  std::string median;
  // [k000100, k000150): 50 sampled keys, below kMin.
  EXPECT_FALSE(sample.Median(KeyBounds{Key(100), Key(150)}, &median));
  ASSERT_TRUE(sample.Median(KeyBounds{Key(100), Key(300)}, &median));
  EXPECT_EQ(median, Key(200));
  // Every sampled request on the region's lowest key: no key splits it.
  LoadSample lowest;
  for (uint64_t n = 0; n < 200; ++n)
    lowest.Note(n * LoadSample::kEvery, Key(7));
  EXPECT_FALSE(lowest.Median(KeyBounds{Key(7), Key(9)}, &median));
}

}  // namespace
}  // namespace kvs::lsm
