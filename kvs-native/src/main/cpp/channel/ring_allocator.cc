#include "channel/ring_allocator.h"

#include "util/check.h"

namespace kvs::channel {

RingAllocator::RingAllocator(uint32_t capacity, uint32_t unit)
    : capacity_(capacity), unit_(unit) {
  KVS_CHECK(unit > 0 && capacity > 0 && capacity % unit == 0);
}

std::optional<RingAllocator::Allocation> RingAllocator::Allocate(
    uint32_t size) {
  KVS_CHECK(size > 0 && size % unit_ == 0);
  if (size > capacity_) {
    return std::nullopt;
  }
  Allocation allocation;
  uint32_t skipped = 0;
  if (head_ + size > capacity_) {
    skipped = capacity_ - head_;
    allocation.wrapped_from = head_;
  }
  if (used_ + skipped + size > capacity_) {
    return std::nullopt;
  }
  allocation.offset = skipped > 0 ? 0 : head_;
  allocation.size = size;
  allocation.id = next_id_++;
  head_ = (allocation.offset + size) % capacity_;
  used_ += skipped + size;
  ++live_;
  entries_.push_back({allocation.id, skipped + size, false});
  return allocation;
}

void RingAllocator::Release(uint64_t id) {
  // Allocations are few (bounded by outstanding requests): a scan is fine.
  bool found = false;
  for (Entry& entry : entries_) {
    if (entry.id == id) {
      KVS_CHECK_MSG(!entry.released, "ring space released twice");
      entry.released = true;
      found = true;
      break;
    }
  }
  KVS_CHECK_MSG(found, "releasing ring space that was never allocated");
  --live_;
  while (!entries_.empty() && entries_.front().released) {
    used_ -= entries_.front().bytes;
    entries_.pop_front();
  }
}

}  // namespace kvs::channel
