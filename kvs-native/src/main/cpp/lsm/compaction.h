// Compaction: merges a newer source (the immutable L0s, or levels: Li, or
// a region's draining levels) into the next level, building the new level
// bottom-up into fresh segments.
//
// Merge rules, for each key (the newer source wins; older versions drop):
// - a tombstone is kept, except in the last level, where it is dropped;
// - a medium value from L0 goes to the transient medium log (the leaf keeps
//   a pointer) unless the output is the last level, where it stays in place;
// - a medium-log pointer is resolved and its value put in place when the
//   output is the last level -- then every input medium segment is freed
//   wholesale -- otherwise kept, and the input medium segments travel on
//   with the output level;
// - a large-log pointer is kept; when a version holding one is dropped, its
//   record's bytes count as garbage of its large-log segment;
// - a key outside the job's bounds (a split region's share of its parent's
//   levels) is dropped like an older version.
//
// Nothing is installed here: the caller commits the output's segments, the
// new descriptor and the frees of the inputs in one metadata batch.

#ifndef KVS_LSM_COMPACTION_H_
#define KVS_LSM_COMPACTION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "alloc/volume.h"
#include "log/log_writer.h"
#include "lsm/key_bounds.h"
#include "lsm/kv_placement.h"
#include "lsm/l0_table.h"
#include "lsm/level.h"
#include "lsm/segment_writer.h"

namespace kvs::lsm {

struct CompactionJob {
  uint64_t region_id = 0;
  KeyBounds bounds;  // the region's: keys outside are left out
  // Exactly one of the two sources: immutable L0s, newest first (several
  // that waited in line are merged together, so that they share one
  // rewrite of L1), or levels, newest first (one, or the draining levels
  // that waited for one drain: they share one rewrite of L2).
  std::vector<std::shared_ptr<L0Table>> source_l0s;
  std::vector<std::shared_ptr<Level>> source_levels;
  std::shared_ptr<Level> target;  // null: the output level is new
  bool last_level = false;        // no level below the output
  PlacementOptions placement;
  double bloom_bits_per_key = 10;
  // Called per finished index segment (Send-Index ships it).
  SegmentWriter::SegmentHook on_index_segment;
  // Every byte range the compaction appends to the medium log (segment
  // headers and records), in order, before any index segment that may
  // point at it is reported: what Send-Index mirrors like the other logs.
  std::function<void(const log::AppendedBytes&)> on_medium_append;
};

struct CompactionResult {
  LevelDescriptor output;
  // Segments written for the output (to be committed as allocated).
  std::vector<uint64_t> new_segments;
  // Segments of the inputs the output no longer needs (to be freed).
  std::vector<uint64_t> obsolete_segments;
  // Large-log garbage discovered: segment -> record bytes dropped.
  std::map<uint64_t, uint64_t> large_garbage;
  uint64_t entries_in = 0;
  uint64_t bytes_written = 0;         // index and medium segments
  uint64_t medium_bytes_written = 0;  // of which medium-log segments
  uint64_t bytes_read = 0;            // input nodes and medium records
};

// Runs `job`. On failure every segment it reserved is returned.
Status RunCompaction(alloc::Volume* volume, const CompactionJob& job,
                     CompactionResult* result);

}  // namespace kvs::lsm

#endif  // KVS_LSM_COMPACTION_H_
