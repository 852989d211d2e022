#include "util/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace kvs {
namespace {

TEST(LatencyHistogramTest, AnEmptyHistogramReportsZero) {
  LatencyHistogram histogram;
  EXPECT_EQ(histogram.count(), 0u);
  EXPECT_EQ(histogram.Percentile(50), 0u);
  EXPECT_EQ(histogram.max(), 0u);
}

TEST(LatencyHistogramTest, SmallValuesAreExact) {
  LatencyHistogram histogram;
  for (uint64_t value = 0; value < 100; ++value) histogram.Record(value);
  EXPECT_EQ(histogram.Percentile(50), 49u);
  EXPECT_EQ(histogram.Percentile(99), 98u);
  EXPECT_EQ(histogram.Percentile(100), 99u);
  EXPECT_EQ(histogram.max(), 99u);
}

TEST(LatencyHistogramTest, PercentilesAreWithinOneBucketOfTheSortedValues) {
  std::mt19937_64 random(7);
  std::lognormal_distribution<double> latency(11.0, 2.0);  // ~60 us median
  std::vector<uint64_t> values;
  LatencyHistogram first;
  LatencyHistogram second;
  for (int i = 0; i < 200'000; ++i) {
    const auto value = static_cast<uint64_t>(latency(random));
    values.push_back(value);
    (i % 2 == 0 ? first : second).Record(value);
  }
  first.Merge(second);
  std::sort(values.begin(), values.end());
  ASSERT_EQ(first.count(), values.size());
  for (const double percent : {50.0, 90.0, 99.0, 99.9}) {
    const uint64_t exact =
        values[static_cast<size_t>(percent / 100.0 * values.size()) - 1];
    const uint64_t reported = first.Percentile(percent);
    EXPECT_GE(reported, exact) << percent;
    EXPECT_LE(static_cast<double>(reported),
              static_cast<double>(exact) * (1 + 1.0 / 128) + 1)
        << percent;
  }
  EXPECT_EQ(first.max(), values.back());
  EXPECT_EQ(first.Percentile(100), values.back());
}

TEST(LatencyHistogramTest, TheLargestValuesFitTheLastBucket) {
  LatencyHistogram histogram;
  histogram.Record(UINT64_MAX);
  histogram.Record(uint64_t{1} << 63);
  EXPECT_EQ(histogram.Percentile(100), UINT64_MAX);
  // 2^63 is the first of the top power's 128 buckets.
  EXPECT_EQ(histogram.Percentile(50),
            (uint64_t{1} << 63) + (uint64_t{1} << 56) - 1);
}

}  // namespace
}  // namespace kvs
