// RegionIterator: an ordered scan over a region's live keys, merged from
// the active L0, the immutable L0s and every device level.
//
// The iterator reads a snapshot: L0 entries newer than the LSN at creation
// are ignored, and the immutable L0s and levels it starts with stay alive
// (shared ownership) even if compactions replace them meanwhile -- their
// segments are not reused while the iterator exists, so keep it short-lived.
// For each key the newest source wins; tombstones hide the key. It moves
// forward (Seek, Next) or backward (SeekForPrev, SeekToLast, Prev), and may
// change direction at any key; a backward step in a level re-descends its
// tree once per leaf, so backward scans cost about one more cached index
// walk per leaf than forward ones.
//
// Not thread-safe: one thread uses an iterator at a time. The region must
// outlive it.

#ifndef KVS_LSM_REGION_ITERATOR_H_
#define KVS_LSM_REGION_ITERATOR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "btree/tree_reader.h"
#include "lsm/l0_table.h"
#include "lsm/level.h"
#include "util/status.h"

namespace kvs::lsm {

class Region;

class RegionIterator {
 public:
  // Sources newest first. Use Region::NewIterator.
  RegionIterator(const Region* region, uint64_t snapshot_lsn,
                 std::vector<std::shared_ptr<L0Table>> tables,
                 std::vector<std::shared_ptr<Level>> levels,
                 std::optional<std::string> upper_bound,
                 std::optional<std::string> lower_bound = std::nullopt);
  ~RegionIterator();
  RegionIterator(const RegionIterator&) = delete;
  RegionIterator& operator=(const RegionIterator&) = delete;

  // Positions at the first live key (at or above the lower bound).
  void SeekToFirst();
  // Positions at the first live key >= `target` (and the lower bound).
  void Seek(std::string_view target);
  bool Valid() const { return valid_; }
  // Requires Valid().
  void Next();
  // Positions at the last live key (below the upper bound).
  void SeekToLast();
  // Positions at the last live key <= `target` (below the upper bound).
  void SeekForPrev(std::string_view target);
  // Requires Valid(). Moves to the previous live key (at or above the lower
  // bound).
  void Prev();
  std::string_view key() const { return key_; }
  // Reads the current value (following a log pointer if needed).
  Status value(std::string* value) const;
  // One pair of ReadPairs.
  struct Pair {
    std::string key;
    std::string value;
  };
  // Appends the pairs from the current position on to `pairs` and moves
  // past them (forward, or with `backward` backward: descending keys),
  // stopping after `limit` pairs or once their keys and
  // values reach `max_bytes` (at least one pair is read if the iterator is
  // valid). The values behind log pointers are read together, as one batch of
  // concurrent device reads, which makes a scan cost about one device
  // latency per batch instead of one per value.
  Status ReadPairs(size_t limit, size_t max_bytes, std::vector<Pair>* pairs,
                   bool backward = false);

  // OK unless a read failed; then Valid() is false.
  Status status() const { return status_; }

 private:
  struct Source;
  // Moves every source to its first entry >= target (or > target if
  // `exclusive`), then picks the next live key.
  void Position(std::string_view target, bool exclusive);
  // Picks the next live key in the direction the sources were moved
  // (backward_), within the bounds.
  void FindLive();
  // Moves every source to its last entry <= target (< target if
  // `exclusive`), then picks the previous live key. A `step` back from the
  // current key moves only the sources at it if they stand backward already.
  void PositionBackward(std::string_view target, bool exclusive, bool step);

  const Region* const region_;
  const uint64_t snapshot_lsn_;
  const std::optional<std::string> upper_bound_;
  const std::optional<std::string> lower_bound_;
  // The way the sources were last moved: each is at its first entry after
  // the current key (forward), or its last entry before it (backward).
  bool backward_ = false;
  std::vector<std::unique_ptr<Source>> sources_;
  bool valid_ = false;
  std::string key_;
  size_t current_source_ = 0;
  Status status_;
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_REGION_ITERATOR_H_
