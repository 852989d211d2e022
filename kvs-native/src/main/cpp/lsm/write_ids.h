// WriteIds: the conditional writes a region applied, by write id (client,
// sequence: log::WriteId), so that a retry of one -- its client did not
// learn the outcome, a connection failed or the primary changed -- is
// answered as the first attempt was instead of being applied again (as
// HBase's nonces). Every replica's log keeps the id with the write's record
// (log_format.h), so a region rebuilds the table from the records it
// replays when it opens: after a restart or a promotion it knows every id
// written past its levels.
//
// What it cannot know, it says: `horizon` is an LSN such that every write
// with a greater LSN that carried an id is in the table. It starts at the
// region's compacted LSN when the region opens (records compacted into the
// levels are not replayed: their ids are gone), 0 for a new region, the
// last LSN for a split's daughter (whose parent's ids stay with the parent),
// and rises to the LSN of each entry forgotten to stay within
// limits::write_ids_per_region_max. A retry carries a floor, the largest LSN
// its client saw in a reply of the region before its first attempt (which
// therefore, if applied, has a greater LSN): if the id is not in the table
// and the floor is below the horizon, the first attempt may have been
// applied and forgotten, and the retry's outcome is unknown.
//
// Thread safety: all methods may be called concurrently.

#ifndef KVS_LSM_WRITE_IDS_H_
#define KVS_LSM_WRITE_IDS_H_

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "log/log_format.h"

namespace kvs::lsm {

class WriteIds {
 public:
  // What a write with an id did: its LSN, and what it wrote (a delete, or a
  // put's value when it is 8 bytes -- an increment's counter; else empty).
  struct Applied {
    uint64_t lsn = 0;
    bool deleted = false;
    std::string small_value;
  };

  explicit WriteIds(size_t capacity) : capacity_(capacity) {}

  // Records the write `id` made at `lsn` (a put of `value`, or a delete).
  void Record(log::WriteId id, uint64_t lsn, bool deleted,
              std::string_view value);
  std::optional<Applied> Find(log::WriteId id) const;
  uint64_t horizon() const;
  // Forgets everything and knows nothing at or below `lsn` (a region
  // opening: set before its replay records what it finds).
  void Reset(uint64_t horizon);
  size_t size() const;

 private:
  struct Hash {
    size_t operator()(const log::WriteId& id) const {
      return static_cast<size_t>(id.client * 0x9e3779b97f4a7c15ull ^
                                 id.sequence);
    }
  };
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<log::WriteId, Applied, Hash> by_id_;
  // In the order recorded, for forgetting the oldest (an entry whose id was
  // recorded again since is stale: by_id_ names a later LSN for it).
  std::deque<std::pair<uint64_t, log::WriteId>> order_;
  uint64_t horizon_ = 0;
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_WRITE_IDS_H_
