// ContentsDigest: one number for the logical contents a replica of a region
// serves -- its live key/value pairs in key order, however they are stored
// -- so that the replicas of a region can be compared without shipping them
// (`./kvs local verify`, docs/OPERATIONS.md). Equal digests mean the same
// pairs; where the pairs sit (levels, L0, log records), and the pointers
// inside levels, do not enter it.
//
// A primary (and any replica with a region of its own: Build-Index backups,
// with the records their stream holds beyond the region, and regions
// without replication) is digested as it serves (DigestRegion): a scan of
// its L0s and device levels. A Send-Index backup is digested as
// what it would serve if promoted (replica_digest.h): its installed levels
// with the log records past them replayed over them. Both come with counts
// that say how much of the comparison was real: the live pairs the device
// levels alone hold, and the entries (L0) or records (log copies) past them.
//
// The digest: each live pair hashes to Hash64(value, seed Hash64(key)), and
// the pairs combine in key order as digest = digest * kMultiplier + hash.
//
// Thread safety: pure functions of their arguments; DigestRegion may run
// while the region serves (it reads a snapshot).

#ifndef KVS_REPLICATION_CONTENTS_DIGEST_H_
#define KVS_REPLICATION_CONTENTS_DIGEST_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/file.h"
#include "lsm/key_bounds.h"
#include "lsm/level.h"
#include "lsm/region.h"
#include "util/status.h"

namespace kvs::replication {

struct ContentsDigest {
  uint64_t digest = 0;
  uint64_t pairs = 0;        // live pairs served
  uint64_t level_pairs = 0;  // live pairs of the device levels alone
  uint64_t levels = 0;       // non-empty device levels
  // Past the levels: a region's L0 entries (active and immutable), a
  // replica's log records replayed (to the first missing LSN).
  uint64_t past_levels = 0;
  // A replica's log records past that first missing LSN, which a promotion
  // drops (a region's: 0).
  uint64_t dropped = 0;
  uint64_t last_lsn = 0;  // the last LSN served
  uint64_t compacted_lsn = 0;
};

// Combines pair hashes in key order.
class PairDigest {
 public:
  static uint64_t Hash(std::string_view key, std::string_view value);
  void Add(uint64_t pair_hash) {
    digest_ = digest_ * kMultiplier + pair_hash;
    ++pairs_;
  }
  uint64_t digest() const { return digest_; }
  uint64_t pairs() const { return pairs_; }

 private:
  static constexpr uint64_t kMultiplier = 0x9e3779b97f4a7c15ull;
  uint64_t digest_ = 0;
  uint64_t pairs_ = 0;
};

// What a log record past the levels left for a key: a value (by its pair
// hash) or a delete.
struct Overlay {
  bool put = false;
  uint64_t pair_hash = 0;
};

// Digests `levels` (newest first; null entries are skipped) with `overlay`
// merged over them (newer than every level: a put replaces, a delete
// hides), reading values behind log pointers from `file`. Fills digest,
// pairs, level_pairs and levels of `*digest`. Keys outside `bounds` are left
// out (a split region's levels hold its sibling's keys too).
Status DigestMerged(io::File* file,
                    const std::vector<std::shared_ptr<lsm::Level>>& levels,
                    const std::map<std::string, Overlay>& overlay,
                    const lsm::KeyBounds& bounds, ContentsDigest* digest);

// The live pairs of `levels` alone (newest first; null entries skipped)
// within `bounds`, and how many of the levels are non-empty.
Status CountLevelPairs(const std::vector<std::shared_ptr<lsm::Level>>& levels,
                       const lsm::KeyBounds& bounds, uint64_t* pairs,
                       uint64_t* non_empty);

// What `region` serves: one scan of its L0s and levels for the digest, and
// its levels alone for level_pairs (at nearly the same moment: a
// compaction in between makes the counts disagree with the digest, and a
// caller comparing replicas asks again). With `overlay`, what it would
// serve with those records applied over it (a Build-Index backup's records
// not applied yet); they count in past_levels.
Status DigestRegion(const lsm::Region& region, ContentsDigest* digest);
Status DigestRegion(const lsm::Region& region,
                    const std::map<std::string, Overlay>& overlay,
                    ContentsDigest* digest);

}  // namespace kvs::replication

#endif  // KVS_REPLICATION_CONTENTS_DIGEST_H_
