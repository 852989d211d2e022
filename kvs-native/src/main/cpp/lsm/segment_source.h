// SegmentSource: the NodeSource compactions read their input levels through.
//
// A level is written bottom-up, segment after segment, so a full scan of it
// reads its segments in order. This source reads a whole segment (2 MiB,
// one direct I/O) when a node in it is first needed and serves every later
// node of that segment from memory, keeping the few most recent segments
// (index nodes sit in the segment of their last child). It bypasses the
// node cache, which a one-pass merge would only flush of the nodes readers
// need. Not thread-safe: one compaction owns it.

#ifndef KVS_LSM_SEGMENT_SOURCE_H_
#define KVS_LSM_SEGMENT_SOURCE_H_

#include <cstdint>
#include <list>
#include <memory>
#include <string>

#include "btree/tree_reader.h"
#include "io/aligned_buffer.h"
#include "io/file.h"

namespace kvs::lsm {

class SegmentSource final : public btree::NodeSource {
 public:
  explicit SegmentSource(io::File* file) : file_(file) {}

  Status Read(uint64_t device_offset, size_t size, std::string* node) override;

  uint64_t bytes_read() const { return bytes_read_; }

 private:
  // Three segments: the one being scanned, the next, and one holding index
  // nodes met on the way down.
  static constexpr size_t kSegmentsKept = 3;
  struct Loaded {
    uint64_t segment;
    io::AlignedBuffer bytes;
  };
  io::File* const file_;
  std::list<Loaded> loaded_;  // front: most recent
  uint64_t bytes_read_ = 0;
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_SEGMENT_SOURCE_H_
