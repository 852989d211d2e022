// SegmentWriter: the NodeSink compaction builds a level into. Packs nodes
// into segments reserved from the volume, buffers each segment, and writes
// it whole (direct I/O, one large write, zeros after its nodes) once every node
// allocated in it has been written -- then calls the per-segment hook (what
// Send-Index ships).
//
// The segments stay reserved (not allocated) until the caller commits them
// in the batch that installs the level; Abandon() returns them on failure.
// Not thread-safe: one compaction owns it.

#ifndef KVS_LSM_SEGMENT_WRITER_H_
#define KVS_LSM_SEGMENT_WRITER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string_view>
#include <vector>

#include "alloc/volume.h"
#include "btree/tree_builder.h"
#include "io/aligned_buffer.h"

namespace kvs::lsm {

class SegmentWriter final : public btree::NodeSink {
 public:
  // Called once per finished segment with its number and the bytes written
  // to it (from offset 0).
  using SegmentHook =
      std::function<Status(uint64_t segment, std::string_view bytes)>;

  SegmentWriter(alloc::Volume* volume, SegmentHook hook)
      : volume_(volume), hook_(std::move(hook)) {}
  ~SegmentWriter() override;

  Status Allocate(size_t size, uint64_t* device_offset) override;
  Status Write(uint64_t device_offset, std::string_view node) override;
  // Writes out the last segment(s). Requires every allocation written.
  Status Finish();
  // Unreserves every segment (after a failure, or a cancelled compaction).
  void Abandon();

  const std::vector<uint64_t>& segments() const { return segments_; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  struct Pending {
    io::AlignedBuffer buffer;
    size_t used = 0;       // bytes allocated from the start
    size_t unwritten = 0;  // allocations not yet written
  };
  Status FlushSegment(uint64_t segment, Pending& pending);

  alloc::Volume* const volume_;
  const SegmentHook hook_;
  std::vector<uint64_t> segments_;    // every segment reserved, in order
  std::map<uint64_t, Pending> open_;  // buffered, not yet written
  uint64_t current_ = 0;              // segment allocations come from
  bool has_current_ = false;
  uint64_t bytes_written_ = 0;
  bool finished_ = false;
};

// Writes `bytes` through `writer` in pieces of up to one segment (each
// padded to 4 KiB); appends the pieces' device offsets to `chunks`.
Status WriteBlob(SegmentWriter* writer, std::string_view bytes,
                 std::vector<uint64_t>* chunks);

}  // namespace kvs::lsm

#endif  // KVS_LSM_SEGMENT_WRITER_H_
