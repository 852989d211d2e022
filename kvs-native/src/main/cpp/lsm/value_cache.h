// ValueCache: the engine's cache of values read from the value logs (large
// and medium records), shared by every region of a volume, so that a read of
// a hot value costs a lookup, not a device read (a shard's read otherwise
// blocks on a direct-I/O pread: docs/BENCHMARKS.md, the tail and protocol
// profiles of issue 26).
//
// Entries are keyed by the record's device offset and hold its size, key
// and value; a lookup hits only for the same size and key, so a pointer
// never gets another record's value. A record is immutable while its
// segment is allocated; EraseSegment (the volume's reuse hook, through
// RecordReader::Forget) drops a segment's entries before the segment is
// handed out again, and before a recovery that cut a log appends where the
// records it dropped were (Region::CutLog). Values are cached only once checked
// (checksum and key, RecordReader). Values above kValueBytesMax are not cached:
// one would push out hundreds of small ones.
//
// Bounded: at most `capacity_bytes` of keys and values (moved at run time by
// SetCapacity: the engine's cache split, lsm/cache_split.h), in LRU order per
// shard (16 shards by segment, so readers on different threads rarely share
// a lock). Each shard also lists its entries by segment, so EraseSegment
// costs the segment's entries, not a walk of the shard under its lock (a
// compaction freeing segments held a shard's readers up to 422 ms that way:
// docs/BENCHMARKS.md, the tail profile).
//
// Thread safety: all methods may be called concurrently.

#ifndef KVS_LSM_VALUE_CACHE_H_
#define KVS_LSM_VALUE_CACHE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "lsm/ghost_list.h"

namespace kvs::lsm {

struct ValueCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t cached_bytes = 0;
  uint64_t capacity_bytes = 0;
  // Misses on values evicted lately (ghost list): hits more memory would
  // have given.
  uint64_t ghost_hits = 0;
};

class ValueCache {
 public:
  static constexpr size_t kValueBytesMax = 16u << 10;

  explicit ValueCache(size_t capacity_bytes);
  ValueCache(const ValueCache&) = delete;
  ValueCache& operator=(const ValueCache&) = delete;

  // The value of the record of `size` bytes at `device_offset` written for
  // `key`, if cached.
  bool Get(uint64_t device_offset, uint32_t size, std::string_view key,
           std::string* value);
  // Caches a checked record's value (unless it is above kValueBytesMax).
  void Put(uint64_t device_offset, uint32_t size, std::string_view key,
           std::string_view value);
  // Drops every entry inside `segment` (before the segment is reused).
  void EraseSegment(uint64_t segment);
  // Holds at most `capacity_bytes` from now on (evicting at once when
  // smaller), remembering up to `ghost_bytes` of evicted values.
  void SetCapacity(size_t capacity_bytes, size_t ghost_bytes);
  ValueCacheStats stats() const;

 private:
  static constexpr size_t kShards = 16;
  // What a ghost entry stands for, in bytes of memory: a typical value with
  // its key and overheads.
  static constexpr size_t kGhostEntryBytes = 1024;
  struct Entry {
    uint32_t size;
    std::string key;
    std::string value;
    std::list<uint64_t>::iterator position;
    std::list<uint64_t>::iterator in_segment;  // in Shard::by_segment
  };
  struct Shard {
    mutable std::mutex mutex;
    std::list<uint64_t> lru;  // front: most recent
    std::unordered_map<uint64_t, Entry> entries;
    // segment -> the offsets of its entries
    std::unordered_map<uint64_t, std::list<uint64_t>> by_segment;
    size_t bytes = 0;
    GhostList ghost;
  };
  static size_t Charge(const Entry& entry) {
    // The strings, the map and list nodes and the allocator's overhead.
    return entry.key.size() + entry.value.size() + 192;
  }
  Shard& ShardFor(uint64_t device_offset);
  void EraseLocked(Shard& shard,
                   std::unordered_map<uint64_t, Entry>::iterator it);

  // Evicts the least recent entries until the shard fits its capacity.
  void TrimLocked(Shard& shard);

  std::atomic<size_t> shard_capacity_bytes_;
  Shard shards_[kShards];
  std::atomic<uint64_t> hits_{0}, misses_{0}, ghost_hits_{0};
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_VALUE_CACHE_H_
