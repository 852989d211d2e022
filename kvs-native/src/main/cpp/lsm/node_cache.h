// NodeCache: the engine's cache of B+-tree nodes, shared by every region of
// a volume, and the NodeSource the tree readers read through.
//
// Nodes are cached by device offset in LRU order, in shards so readers on
// different threads rarely share a lock; the capacity (bytes of node data)
// is the cache's share of the engine's memory budget, moved at run time
// (SetCapacity: the engine's cache split, lsm/cache_split.h, fed by the
// ghost list of what was evicted lately). A node is immutable
// while its segment is allocated, so entries never go stale -- except when
// the segment is reused, which is why EraseSegment must be called before a
// freed segment is handed out again.
//
// Thread safety: all methods may be called concurrently.

#ifndef KVS_LSM_NODE_CACHE_H_
#define KVS_LSM_NODE_CACHE_H_

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "btree/tree_reader.h"
#include "io/file.h"
#include "lsm/ghost_list.h"

namespace kvs::lsm {

struct NodeCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t bytes_read = 0;  // device bytes read on misses
  uint64_t cached_bytes = 0;
  uint64_t capacity_bytes = 0;
  // Misses on nodes evicted lately (ghost list): hits more memory would
  // have given.
  uint64_t ghost_hits = 0;
};

class NodeCache final : public btree::NodeSource {
 public:
  NodeCache(io::File* file, size_t capacity_bytes);

  Status Read(uint64_t device_offset, size_t size, std::string* node) override;
  // Shares the cached bytes; nodes are validated once, when they enter the
  // cache, and handed out as validated from then on.
  Status ReadShared(uint64_t device_offset, size_t size,
                    SharedNode* node) override;
  // Drops every cached node inside `segment`.
  void EraseSegment(uint64_t segment);
  // Holds at most `capacity_bytes` from now on (evicting at once when
  // smaller), remembering up to `ghost_bytes` of evicted nodes.
  void SetCapacity(size_t capacity_bytes, size_t ghost_bytes);
  NodeCacheStats stats() const;

 private:
  static constexpr size_t kShards = 16;
  struct Shard {
    std::mutex mutex;
    std::list<uint64_t> lru;  // front: most recent
    struct Entry {
      std::shared_ptr<const std::string> bytes;
      bool validated;
      std::list<uint64_t>::iterator position;
      std::list<uint64_t>::iterator in_segment;  // in by_segment
    };
    std::unordered_map<uint64_t, Entry> entries;
    // segment -> the offsets of its entries, so that EraseSegment costs the
    // segment's nodes, not a walk of every shard (2 % of Run E's CPU).
    std::unordered_map<uint64_t, std::list<uint64_t>> by_segment;
    size_t bytes = 0;
    GhostList ghost;
  };
  Shard& ShardFor(uint64_t device_offset);
  void Insert(Shard& shard, uint64_t device_offset,
              std::shared_ptr<const std::string> bytes, bool validated);
  // Evicts the least recent nodes until the shard fits its capacity.
  void TrimLocked(Shard& shard);
  void EraseLocked(Shard& shard,
                   std::unordered_map<uint64_t, Shard::Entry>::iterator it);

  io::File* const file_;
  std::atomic<size_t> shard_capacity_bytes_;
  Shard shards_[kShards];
  std::atomic<uint64_t> hits_{0}, misses_{0}, bytes_read_{0}, ghost_hits_{0};
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_NODE_CACHE_H_
