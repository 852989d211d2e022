// LatencyHistogram: a log-linear histogram of non-negative integer values
// (latencies in nanoseconds), for benchmarks.
//
// Values below 128 have a bucket each; above, every power of two is cut into
// 128 equal buckets, so a percentile is reported within 1/128 (< 0.8 %) of
// the true value, as HdrHistogram's two significant digits. The maximum is
// kept exactly. 7,424 counters (58 KiB); not thread-safe: each thread
// records into its own and the histograms are merged afterwards.

#ifndef KVS_UTIL_HISTOGRAM_H_
#define KVS_UTIL_HISTOGRAM_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace kvs {

class LatencyHistogram {
 public:
  void Record(uint64_t value);
  // Adds every value `other` recorded.
  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  // 0 when empty.
  uint64_t max() const { return max_; }
  // The smallest bucket bound at or below which `percent` (0..100) of the
  // values fall, never above max(); 0 when empty.
  uint64_t Percentile(double percent) const;

 private:
  static constexpr unsigned kSubBucketBits = 7;
  static constexpr size_t kSubBuckets = size_t{1} << kSubBucketBits;
  // Exact buckets for [0, 128), then 128 per power of two from 2^7 to 2^63.
  static constexpr size_t kBuckets = kSubBuckets * (64 - kSubBucketBits + 1);

  static size_t IndexOf(uint64_t value);
  static uint64_t UpperBoundOf(size_t index);

  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  uint64_t max_ = 0;
};

}  // namespace kvs

#endif  // KVS_UTIL_HISTOGRAM_H_
