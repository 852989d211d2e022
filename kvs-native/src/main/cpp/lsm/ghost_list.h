// GhostList: the keys a cache evicted lately (no data, only their size), so
// that a miss on one of them tells the cache it would have hit with that
// many more bytes -- the signal (as ARC's ghost lists) by which the engine
// moves memory between its node cache and its value cache
// (lsm/cache_split.h).
//
// Bounded: at most `capacity_bytes` of the evicted entries' charges, oldest
// forgotten first; a key added again replaces its old place.
//
// Not thread-safe: a cache shard holds one under its lock.

#ifndef KVS_LSM_GHOST_LIST_H_
#define KVS_LSM_GHOST_LIST_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <unordered_map>
#include <utility>

namespace kvs::lsm {

class GhostList {
 public:
  void set_capacity_bytes(size_t bytes) {
    capacity_bytes_ = bytes;
    Trim();
  }
  size_t bytes() const { return bytes_; }

  // Remembers that `key`, of `charge` bytes, was evicted.
  void Add(uint64_t key, size_t charge) {
    Erase(key);
    if (charge > capacity_bytes_) return;
    order_.push_front(key);
    entries_[key] = {order_.begin(), charge};
    bytes_ += charge;
    Trim();
  }
  // Whether `key` was evicted lately; forgets it either way.
  bool Take(uint64_t key) { return Erase(key); }
  bool Erase(uint64_t key) {
    const auto it = entries_.find(key);
    if (it == entries_.end()) return false;
    bytes_ -= it->second.second;
    order_.erase(it->second.first);
    entries_.erase(it);
    return true;
  }

 private:
  void Trim() {
    while (bytes_ > capacity_bytes_ && !order_.empty()) {
      Erase(order_.back());
    }
  }

  size_t capacity_bytes_ = 0;
  size_t bytes_ = 0;
  std::list<uint64_t> order_;  // front: evicted last
  std::unordered_map<uint64_t, std::pair<std::list<uint64_t>::iterator, size_t>>
      entries_;
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_GHOST_LIST_H_
