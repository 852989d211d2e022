// Arena: a thread-safe bump allocator whose memory is released all at once.
//
// L0 allocates every skiplist node from an arena owned by the table, because
// nothing in L0 is freed before the whole table is compacted: a per-node
// malloc would cost a lock or a thread cache per insert and fragment the heap,
// while an arena costs one atomic add and lets the engine charge the table's
// memory to its budget by counting blocks.
//
// Memory comes in blocks of `block_bytes`. Small allocations bump an atomic
// offset in the current block; the mutex is taken only to install a new block
// when the current one is full. An allocation larger than a quarter of a block
// gets a block of its own, so that a large entry never wastes the rest of the
// current block; the waste at the end of a full block is therefore at most a
// quarter of it.
//
// Thread safety: Allocate and MemoryBytes may be called from any number of
// threads at once. The destructor must not race with anything.

#ifndef KVS_LSM_ARENA_H_
#define KVS_LSM_ARENA_H_

#include <atomic>
#include <cstddef>
#include <mutex>

namespace kvs::lsm {

class Arena {
 public:
  // Every allocation is aligned to this: enough for pointers, uint64_t and
  // std::atomic of either, which is all the skiplist stores.
  static constexpr size_t kAlignmentBytes = 8;
  // Blocks smaller than this would make most entries "large" and give each
  // its own block, defeating the arena.
  static constexpr size_t kBlockBytesMin = 1024;
  // A bound that catches a size passed in the wrong unit.
  static constexpr size_t kBlockBytesMax = size_t{1} << 30;

  // Requires kBlockBytesMin <= block_bytes <= kBlockBytesMax. No memory is
  // allocated until the first Allocate, so an idle arena costs nothing.
  explicit Arena(size_t block_bytes);
  ~Arena();

  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // Returns `bytes` (> 0) of uninitialized memory aligned to kAlignmentBytes,
  // owned by the arena and valid until it is destroyed. Thread-safe. Running
  // out of memory is fatal, as for operator new.
  char* Allocate(size_t bytes);

  // Bytes obtained from the system for blocks, including their headers: what
  // the arena's owner counts against its memory budget. Never decreases.
  // Thread-safe; a concurrent Allocate may or may not be reflected yet.
  size_t MemoryBytes() const {
    return memory_bytes_.load(std::memory_order_relaxed);
  }

  size_t block_bytes() const { return block_bytes_; }

 private:
  struct Block;

  // Allocates a block with `capacity` usable bytes and links it into
  // blocks_; requires mutex_.
  Block* NewBlockLocked(size_t capacity);
  // Called when `observed` (possibly null) had no room for `rounded` bytes:
  // installs a new current block unless another thread already did.
  // Returns the allocation, or null to make the caller retry the fast path.
  char* AllocateSlow(Block* observed, size_t rounded);

  const size_t block_bytes_;
  // The block small allocations bump into; null before the first one.
  // Blocks are never freed before the arena, so a thread that loaded a stale
  // value may still safely try (and fail) to bump it.
  std::atomic<Block*> current_{nullptr};
  std::atomic<size_t> memory_bytes_{0};
  std::mutex mutex_;         // serializes installing and linking blocks
  Block* blocks_ = nullptr;  // every block, newest first; guarded by mutex_
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_ARENA_H_
