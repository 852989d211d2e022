#include "util/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "util/check.h"

namespace kvs {

size_t LatencyHistogram::IndexOf(uint64_t value) {
  if (value < kSubBuckets) return static_cast<size_t>(value);
  const unsigned exponent = 63 - static_cast<unsigned>(std::countl_zero(value));
  const uint64_t sub =
      (value >> (exponent - kSubBucketBits)) & (kSubBuckets - 1);
  return (exponent - kSubBucketBits + 1) * kSubBuckets +
         static_cast<size_t>(sub);
}

uint64_t LatencyHistogram::UpperBoundOf(size_t index) {
  if (index < kSubBuckets) return index;
  const unsigned exponent =
      static_cast<unsigned>(index / kSubBuckets) + kSubBucketBits - 1;
  const uint64_t sub = index % kSubBuckets;
  const unsigned shift = exponent - kSubBucketBits;
  const uint64_t lower = (kSubBuckets + sub) << shift;
  return lower + ((uint64_t{1} << shift) - 1);
}

void LatencyHistogram::Record(uint64_t value) {
  const size_t index = IndexOf(value);
  KVS_CHECK(index < kBuckets);
  ++counts_[index];
  ++count_;
  max_ = std::max(max_, value);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  max_ = std::max(max_, other.max_);
}

uint64_t LatencyHistogram::Percentile(double percent) const {
  if (count_ == 0) return 0;
  const double clamped = std::clamp(percent, 0.0, 100.0);
  const uint64_t rank = std::max<uint64_t>(
      1, static_cast<uint64_t>(
             std::ceil(clamped / 100.0 * static_cast<double>(count_))));
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::min(UpperBoundOf(i), max_);
  }
  return max_;
}

}  // namespace kvs
