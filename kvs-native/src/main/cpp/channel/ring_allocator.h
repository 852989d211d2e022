// RingAllocator: the client's bookkeeping of a circular buffer it fills --
// its request buffer on the server and its own reply buffer. Space is taken
// contiguously in units, at the head; it comes back when released, which
// may happen in any order (replies complete out of order), but the buffer's
// tail only moves past released space in allocation order.
//
// When an allocation does not fit between the head and the buffer's end,
// the end is skipped and the allocation starts at offset 0; the skipped
// bytes are charged to that allocation (released with it), and Allocate
// reports where they began so that the sender can put a RESET message
// there when the receiver must be told (request buffers).
//
// Thread safety: none; one owner (the client's submitting side) at a time.

#ifndef KVS_CHANNEL_RING_ALLOCATOR_H_
#define KVS_CHANNEL_RING_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

namespace kvs::channel {

class RingAllocator {
 public:
  struct Allocation {
    uint32_t offset = 0;
    uint32_t size = 0;
    // Set if this allocation wrapped: the offset where the skipped end of
    // the buffer begins (a RESET goes there if at least a unit is left).
    std::optional<uint32_t> wrapped_from;
    uint64_t id = 0;  // for Release
  };

  // `capacity` and every size must be multiples of `unit`.
  RingAllocator(uint32_t capacity, uint32_t unit);

  // Space for `size` bytes, or nothing if the buffer cannot hold it now.
  std::optional<Allocation> Allocate(uint32_t size);
  // Returns an allocation's space (any order; each once).
  void Release(uint64_t id);

  uint32_t capacity() const { return capacity_; }
  uint32_t used() const { return used_; }
  size_t live() const { return live_; }

 private:
  struct Entry {
    uint64_t id;
    uint32_t bytes;  // including skipped bytes before it
    bool released;
  };
  const uint32_t capacity_;
  const uint32_t unit_;
  uint32_t head_ = 0;  // next offset to allocate at
  uint32_t used_ = 0;  // bytes between tail and head, skipped bytes included
  uint64_t next_id_ = 1;
  size_t live_ = 0;
  std::deque<Entry> entries_;  // allocation order
};

}  // namespace kvs::channel

#endif  // KVS_CHANNEL_RING_ALLOCATOR_H_
