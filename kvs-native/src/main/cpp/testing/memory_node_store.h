// Test helper: B+-tree nodes in memory, as the builder writes them and the
// reader reads them (btree::NodeSink and btree::NodeSource).
//
// Nodes are packed into fake 2 MiB segments in allocation order, starting at
// segment `first_segment` (non-zero, so that no node lands at offset 0); a
// node that does not fit in the rest of a segment starts the next one, as
// the engine's sink does. The store checks the builder's side of the sink
// contract: every Write is for an offset Allocate returned, exactly once,
// with the allocated size. Failure knobs make Allocate or Write fail.
//
// Thread safety: none.

#ifndef KVS_TESTING_MEMORY_NODE_STORE_H_
#define KVS_TESTING_MEMORY_NODE_STORE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "btree/tree_builder.h"
#include "btree/tree_reader.h"

namespace kvs::testing {

class MemoryNodeStore : public btree::NodeSink, public btree::NodeSource {
 public:
  explicit MemoryNodeStore(uint64_t first_segment = 1);

  Status Allocate(size_t size, uint64_t* device_offset) override;
  Status Write(uint64_t device_offset, std::string_view node) override;
  // IoError when the range lies outside the segments the store holds.
  Status Read(uint64_t device_offset, size_t size, std::string* node) override;

  // Stores bytes at any offset inside one segment, creating the segment if
  // needed (as a backup storing a received node does).
  void Put(uint64_t device_offset, std::string_view bytes);
  // The bytes at `device_offset`, in place (corruption tests). Requires a
  // segment the store holds.
  char* MutableBytes(uint64_t device_offset);

  // After `calls` more successful calls, Allocate (Write) fails with
  // IoError; nullopt disarms.
  void FailAllocateAfter(std::optional<uint64_t> calls) {
    allocate_calls_before_failure_ = calls;
  }
  void FailWriteAfter(std::optional<uint64_t> calls) {
    write_calls_before_failure_ = calls;
  }

  struct WrittenNode {
    uint64_t offset;
    size_t size;
  };
  // Every node written, in write order.
  const std::vector<WrittenNode>& written() const { return written_; }
  // Offsets allocated and not written yet.
  size_t pending_count() const { return pending_.size(); }
  uint64_t read_count() const { return read_count_; }
  // Segment number -> its 2 MiB of bytes.
  const std::map<uint64_t, std::string>& segments() const { return segments_; }

 private:
  std::string& SegmentFor(uint64_t device_offset, size_t size);

  std::map<uint64_t, std::string> segments_;
  uint64_t segment_;                 // where Allocate packs nodes
  uint64_t segment_used_bytes_ = 0;  // bytes of segment_ allocated
  std::map<uint64_t, size_t> pending_;
  std::vector<WrittenNode> written_;
  uint64_t read_count_ = 0;
  std::optional<uint64_t> allocate_calls_before_failure_;
  std::optional<uint64_t> write_calls_before_failure_;
};

}  // namespace kvs::testing

#endif  // KVS_TESTING_MEMORY_NODE_STORE_H_
