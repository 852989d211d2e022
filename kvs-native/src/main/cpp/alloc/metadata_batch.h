// MetadataBatch: one atomic change to a volume's durable metadata.
//
// A batch allocates segments, shares and frees references to them, and
// edits the catalog (a key -> value map of metadata: region descriptors,
// level roots, log segment lists). Volume::Commit writes it as one redo-log
// record, so after a crash either all of it happened or none of it: a
// compaction commits its new level's segments, the freed old ones and the
// new root together.
//
// Every allocated segment has a reference count: Allocate makes it 1, Share
// adds one (a second owner: regions split from one parent reading its
// levels and logs, a snapshot pinning them), Free drops one. The segment is
// free (reusable once the batch is durable and no reader pins it) when its
// last reference goes, so no owner needs to know of the others. Applied in
// that order: allocations, shares, frees.
//
// Payload encoding (varints and length-prefixed byte strings, util/coding.h):
//
// clang-format off
// | field       | encoding                                                    |
// |-------------|-------------------------------------------------------------|
// | allocations | varint count, then varint segment numbers                   |
// | frees       | varint count, then varint segment numbers                   |
// | puts        | varint count, then (key, value) pairs, each length-prefixed |
// | deletes     | varint count, then length-prefixed keys                     |
// | shares      | varint count, then varint segment numbers (volume format 2; |
// |             | absent in records of format 1, which read as none)          |
// clang-format on
//
// Not thread-safe; build it in one thread, then hand it to Commit.

#ifndef KVS_ALLOC_METADATA_BATCH_H_
#define KVS_ALLOC_METADATA_BATCH_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status.h"

namespace kvs::alloc {

class MetadataBatch {
 public:
  // `segment` must have been reserved with Volume::Reserve.
  void Allocate(uint64_t segment) { allocations_.push_back(segment); }
  // Adds a reference to `segment`, allocated (committed, or allocated in
  // this batch): it stays allocated until every reference is freed. May name
  // a segment more than once (one reference each).
  void Share(uint64_t segment) { shares_.push_back(segment); }
  // Drops a reference to `segment`, allocated (committed); at its last
  // reference it becomes reusable once the batch is durable.
  void Free(uint64_t segment) { frees_.push_back(segment); }
  // Like Free, but the caller's readers keep the segment from reuse after
  // the batch is durable, until Volume::ReleaseDeferred (a pin taken at
  // commit): for segments readers may still be reading (an old level being
  // replaced), also when another owner frees its reference meanwhile.
  // Recorded as a plain free, so after a restart the pin is gone.
  void FreeDeferred(uint64_t segment) {
    frees_.push_back(segment);
    deferred_.push_back(segment);
  }
  const std::vector<uint64_t>& deferred_frees() const { return deferred_; }
  void Put(std::string_view key, std::string_view value) {
    puts_.emplace_back(std::string(key), std::string(value));
  }
  void Delete(std::string_view key) { deletes_.emplace_back(key); }

  bool empty() const {
    return allocations_.empty() && shares_.empty() && frees_.empty() &&
           puts_.empty() && deletes_.empty();
  }

  const std::vector<uint64_t>& allocations() const { return allocations_; }
  const std::vector<uint64_t>& shares() const { return shares_; }
  const std::vector<uint64_t>& frees() const { return frees_; }
  const std::vector<std::pair<std::string, std::string>>& puts() const {
    return puts_;
  }
  const std::vector<std::string>& deletes() const { return deletes_; }

  std::string Encode() const;
  // Corruption on any malformed or trailing byte.
  static Status Decode(std::string_view payload, MetadataBatch* batch);

 private:
  std::vector<uint64_t> allocations_;
  std::vector<uint64_t> shares_;
  std::vector<uint64_t> frees_;
  std::vector<uint64_t> deferred_;  // subset of frees_, in memory only
  std::vector<std::pair<std::string, std::string>> puts_;
  std::vector<std::string> deletes_;
};

}  // namespace kvs::alloc

#endif  // KVS_ALLOC_METADATA_BATCH_H_
