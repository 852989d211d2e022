#include "lsm/arena.h"

#include <new>

#include "util/check.h"
#include "util/sanitizers.h"

#if defined(KVS_ADDRESS_SANITIZER)
#include <sanitizer/asan_interface.h>
#define KVS_ARENA_POISON(address, size) ASAN_POISON_MEMORY_REGION(address, size)
#define KVS_ARENA_UNPOISON(address, size) \
  ASAN_UNPOISON_MEMORY_REGION(address, size)
#else
#define KVS_ARENA_POISON(address, size) ((void)(address), (void)(size))
#define KVS_ARENA_UNPOISON(address, size) ((void)(address), (void)(size))
#endif

namespace kvs::lsm {

// A block's header; its usable bytes follow it directly.
struct Arena::Block {
  Block* next;      // older block in Arena::blocks_
  size_t capacity;  // usable bytes after the header
  // Bytes handed out so far. Grows past `capacity` when threads race for the
  // last bytes: each loser adds at most a quarter block once before it moves
  // on, so the counter cannot overflow.
  std::atomic<size_t> used;

  char* data() { return reinterpret_cast<char*>(this) + sizeof(Block); }
};

Arena::Arena(size_t block_bytes) : block_bytes_(block_bytes) {
  // The data area of a block starts aligned because the header sits at the
  // start of operator new's memory and its size keeps the alignment.
  static_assert(sizeof(Block) % kAlignmentBytes == 0);
  static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ % kAlignmentBytes == 0);
  static_assert((kAlignmentBytes & (kAlignmentBytes - 1)) == 0);
  KVS_CHECK_MSG(block_bytes >= kBlockBytesMin && block_bytes <= kBlockBytesMax,
                "arena block size out of range");
}

Arena::~Arena() {
  Block* block = blocks_;
  while (block != nullptr) {
    Block* next = block->next;
    KVS_ARENA_UNPOISON(block->data(), block->capacity);
    block->~Block();
    ::operator delete(block);
    block = next;
  }
}

char* Arena::Allocate(size_t bytes) {
  KVS_CHECK(bytes > 0);
  const size_t rounded = (bytes + kAlignmentBytes - 1) & ~(kAlignmentBytes - 1);
  KVS_CHECK_MSG(rounded >= bytes && rounded <= kBlockBytesMax,
                "arena allocation too large");
  if (rounded > block_bytes_ / 4) {
    // Large: a block of its own. The current block keeps its free space for
    // the small allocations that follow.
    std::lock_guard<std::mutex> lock(mutex_);
    Block* block = NewBlockLocked(rounded);
    block->used.store(rounded, std::memory_order_relaxed);
    KVS_ARENA_UNPOISON(block->data(), bytes);
    return block->data();
  }
  for (;;) {
    // Acquire pairs with the release that installed the block, so that its
    // header is visible. The bytes handed out need no ordering: each range is
    // owned by exactly one caller.
    Block* block = current_.load(std::memory_order_acquire);
    if (block != nullptr) {
      const size_t offset =
          block->used.fetch_add(rounded, std::memory_order_relaxed);
      if (offset + rounded <= block->capacity) {
        KVS_ARENA_UNPOISON(block->data() + offset, bytes);
        return block->data() + offset;
      }
    }
    if (char* result = AllocateSlow(block, rounded)) {
      KVS_ARENA_UNPOISON(result, bytes);
      return result;
    }
  }
}

char* Arena::AllocateSlow(Block* observed, size_t rounded) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (current_.load(std::memory_order_relaxed) != observed) {
    return nullptr;  // another thread installed a block; bump that one
  }
  Block* block = NewBlockLocked(block_bytes_);
  // Take our bytes before publishing, so the thread that pays for the new
  // block is sure to make progress.
  block->used.store(rounded, std::memory_order_relaxed);
  current_.store(block, std::memory_order_release);
  return block->data();
}

Arena::Block* Arena::NewBlockLocked(size_t capacity) {
  void* memory = ::operator new(sizeof(Block) + capacity);
  Block* block = new (memory) Block{blocks_, capacity, {0}};
  blocks_ = block;
  // Under AddressSanitizer, bytes not yet handed out are poisoned, so that a
  // write past the end of one allocation into the next is reported. Each
  // allocation starts at an 8-byte boundary, ASan's granule, so threads
  // unpoisoning their own allocations touch disjoint shadow bytes.
  KVS_ARENA_POISON(block->data(), capacity);
  memory_bytes_.fetch_add(sizeof(Block) + capacity, std::memory_order_relaxed);
  return block;
}

}  // namespace kvs::lsm
