// GhostList: the keys a cache evicted lately (no data), so that a miss on
// one of them tells the cache it would have hit with more memory -- the
// signal (as ARC's ghost lists) by which the engine moves memory between its
// node cache and its value cache (lsm/cache_split.h).
//
// Direct-mapped: a key lands in one slot by its hash, displacing whatever
// was there, so the list is approximate (a key may be forgotten early) but
// costs one store per eviction and one load per miss, no allocation: a list
// with a hash map cost Run E a tenth of its CPU in the value cache.
//
// Not thread-safe: a cache shard holds one under its lock.

#ifndef KVS_LSM_GHOST_LIST_H_
#define KVS_LSM_GHOST_LIST_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvs::lsm {

class GhostList {
 public:
  // Room for about `entries` keys (rounded up to a power of two; 0: none);
  // what it holds stays if the room does not change.
  void set_capacity(size_t entries) {
    size_t slots = 0;
    if (entries > 0) {
      slots = 1;
      while (slots < entries) slots <<= 1;
    }
    if (slots != slots_.size()) slots_.assign(slots, kEmpty);
  }
  size_t capacity() const { return slots_.size(); }

  // Remembers that `key` was evicted.
  void Add(uint64_t key) {
    if (!slots_.empty()) slots_[Slot(key)] = key;
  }
  // Whether `key` was evicted lately; forgets it either way.
  bool Take(uint64_t key) {
    if (slots_.empty()) return false;
    uint64_t& slot = slots_[Slot(key)];
    if (slot != key) return false;
    slot = kEmpty;
    return true;
  }

 private:
  // No cached key is this offset (it would be the last byte of the device
  // address space).
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  size_t Slot(uint64_t key) const {
    return static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> 20) &
           (slots_.size() - 1);
  }

  std::vector<uint64_t> slots_;
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_GHOST_LIST_H_
