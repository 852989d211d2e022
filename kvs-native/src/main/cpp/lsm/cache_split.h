// CacheSplit: how the engine divides its cache memory between the node
// cache (B+-tree nodes) and the value cache (values read from the logs),
// moved by what each would have gained from more memory.
//
// Each cache keeps a ghost list (lsm/ghost_list.h) of equal size; a miss on
// a ghost entry is a hit that cache would have had with that much more
// memory. Every interval the engine compares the two caches' ghost hits:
// when one has clearly more (ratio_min times the other's, and at least
// hits_min), a step of the memory moves to it, within [share_min,
// share_max] for the value cache. A fixed split was measured wrong in both
// directions: at 8x the cache a 40 % value cache left leaves uncached (Run
// C SD 172 K ops/s against 275 K with 10 %), while scans of hot ranges
// (Run E) want the values (docs/BENCHMARKS.md, "Cache split").
//
// A pure function of the counts, so it is tested without an engine.

#ifndef KVS_LSM_CACHE_SPLIT_H_
#define KVS_LSM_CACHE_SPLIT_H_

#include <algorithm>
#include <cstdint>

namespace kvs::lsm {

struct CacheSplitOptions {
  double share_min = 0.05;  // of the cache memory, for values
  double share_max = 0.6;
  double step = 0.02;
  double ratio_min = 1.25;
  uint64_t hits_min = 32;  // ghost hits in an interval
};

// The value cache's next share, from its share now and the ghost hits of
// the node cache and the value cache in the last interval.
inline double NextValueShare(double share, uint64_t node_ghost_hits,
                             uint64_t value_ghost_hits,
                             const CacheSplitOptions& options = {}) {
  const double nodes = static_cast<double>(node_ghost_hits);
  const double values = static_cast<double>(value_ghost_hits);
  if (value_ghost_hits >= options.hits_min &&
      values > options.ratio_min * nodes) {
    share += options.step;
  } else if (node_ghost_hits >= options.hits_min &&
             nodes > options.ratio_min * values) {
    share -= options.step;
  }
  return std::clamp(share, options.share_min, options.share_max);
}

}  // namespace kvs::lsm

#endif  // KVS_LSM_CACHE_SPLIT_H_
