#include "testing/memory_node_store.h"

#include <cstring>

#include "alloc/device_offset.h"
#include "util/check.h"
#include "util/limits.h"

namespace kvs::testing {

namespace {

// Counts a call down; true when this call must fail.
bool ShouldFail(std::optional<uint64_t>* calls_before_failure) {
  if (!calls_before_failure->has_value()) {
    return false;
  }
  if (**calls_before_failure == 0) {
    return true;
  }
  --**calls_before_failure;
  return false;
}

}  // namespace

MemoryNodeStore::MemoryNodeStore(uint64_t first_segment)
    : segment_(first_segment) {
  KVS_CHECK(first_segment != 0);
}

std::string& MemoryNodeStore::SegmentFor(uint64_t device_offset, size_t size) {
  KVS_CHECK(alloc::OffsetInSegment(device_offset) + size <=
            limits::segment_size_bytes);
  std::string& segment = segments_[alloc::SegmentOf(device_offset)];
  if (segment.empty()) {
    segment.assign(limits::segment_size_bytes, '\0');
  }
  return segment;
}

Status MemoryNodeStore::Allocate(size_t size, uint64_t* device_offset) {
  if (ShouldFail(&allocate_calls_before_failure_)) {
    return Status::IoError("injected allocation failure");
  }
  KVS_CHECK(size > 0 && size <= limits::segment_size_bytes);
  if (segment_used_bytes_ + size > limits::segment_size_bytes) {
    ++segment_;
    segment_used_bytes_ = 0;
  }
  *device_offset = alloc::DeviceOffset(segment_, segment_used_bytes_);
  segment_used_bytes_ += size;
  SegmentFor(*device_offset, size);
  pending_[*device_offset] = size;
  return Status::Ok();
}

Status MemoryNodeStore::Write(uint64_t device_offset, std::string_view node) {
  if (ShouldFail(&write_calls_before_failure_)) {
    return Status::IoError("injected write failure");
  }
  const auto pending = pending_.find(device_offset);
  KVS_CHECK_MSG(pending != pending_.end(), "write of an unallocated offset");
  KVS_CHECK_MSG(pending->second == node.size(), "write of the wrong size");
  pending_.erase(pending);
  Put(device_offset, node);
  written_.push_back({device_offset, node.size()});
  return Status::Ok();
}

Status MemoryNodeStore::Read(uint64_t device_offset, size_t size,
                             std::string* node) {
  ++read_count_;
  const auto segment = segments_.find(alloc::SegmentOf(device_offset));
  if (segment == segments_.end() ||
      alloc::OffsetInSegment(device_offset) + size >
          limits::segment_size_bytes) {
    return Status::IoError("read outside the stored segments");
  }
  node->assign(segment->second, alloc::OffsetInSegment(device_offset), size);
  return Status::Ok();
}

void MemoryNodeStore::Put(uint64_t device_offset, std::string_view bytes) {
  std::string& segment = SegmentFor(device_offset, bytes.size());
  std::memcpy(segment.data() + alloc::OffsetInSegment(device_offset),
              bytes.data(), bytes.size());
}

char* MemoryNodeStore::MutableBytes(uint64_t device_offset) {
  const auto segment = segments_.find(alloc::SegmentOf(device_offset));
  KVS_CHECK(segment != segments_.end());
  return segment->second.data() + alloc::OffsetInSegment(device_offset);
}

}  // namespace kvs::testing
