#include "lsm/value_cache.h"

#include "alloc/device_offset.h"
#include "util/check.h"

namespace kvs::lsm {

ValueCache::ValueCache(size_t capacity_bytes)
    : shard_capacity_bytes_(capacity_bytes / kShards) {}

ValueCache::Shard& ValueCache::ShardFor(uint64_t device_offset) {
  // By segment: a segment's entries share a shard, so EraseSegment walks one.
  const uint64_t segment = alloc::SegmentOf(device_offset);
  return shards_[(segment * 0x9e3779b97f4a7c15ull) >> 60];
}

bool ValueCache::Get(uint64_t device_offset, uint32_t size,
                     std::string_view key, std::string* value) {
  Shard& shard = ShardFor(device_offset);
  std::lock_guard<std::mutex> lock(shard.mutex);
  const auto it = shard.entries.find(device_offset);
  if (it == shard.entries.end() || it->second.size != size ||
      it->second.key != key) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  shard.lru.splice(shard.lru.begin(), shard.lru, it->second.position);
  value->assign(it->second.value);
  hits_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void ValueCache::Put(uint64_t device_offset, uint32_t size,
                     std::string_view key, std::string_view value) {
  if (value.size() > kValueBytesMax) return;
  Shard& shard = ShardFor(device_offset);
  std::lock_guard<std::mutex> lock(shard.mutex);
  if (shard.ghost.Take(device_offset)) {
    ghost_hits_.fetch_add(1, std::memory_order_relaxed);
  }
  if (shard_capacity_bytes_.load(std::memory_order_relaxed) == 0) return;
  const auto existing = shard.entries.find(device_offset);
  if (existing != shard.entries.end()) EraseLocked(shard, existing);
  shard.lru.push_front(device_offset);
  std::list<uint64_t>& in_segment =
      shard.by_segment[alloc::SegmentOf(device_offset)];
  in_segment.push_front(device_offset);
  Entry& entry = shard.entries[device_offset];
  entry = {size, std::string(key), std::string(value), shard.lru.begin(),
           in_segment.begin()};
  shard.bytes += Charge(entry);
  TrimLocked(shard);
}

void ValueCache::TrimLocked(Shard& shard) {
  const size_t capacity = shard_capacity_bytes_.load(std::memory_order_relaxed);
  while (shard.bytes > capacity && !shard.lru.empty()) {
    const auto victim = shard.entries.find(shard.lru.back());
    shard.ghost.Add(victim->first);
    EraseLocked(shard, victim);
  }
}

void ValueCache::SetCapacity(size_t capacity_bytes, size_t ghost_bytes) {
  shard_capacity_bytes_.store(capacity_bytes / kShards,
                              std::memory_order_relaxed);
  for (Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    shard.ghost.set_capacity(ghost_bytes / kShards / kGhostEntryBytes);
    TrimLocked(shard);
  }
}

void ValueCache::EraseLocked(Shard& shard,
                             std::unordered_map<uint64_t, Entry>::iterator it) {
  shard.bytes -= Charge(it->second);
  shard.lru.erase(it->second.position);
  const auto segment = shard.by_segment.find(alloc::SegmentOf(it->first));
  KVS_CHECK(segment != shard.by_segment.end());
  segment->second.erase(it->second.in_segment);
  if (segment->second.empty()) shard.by_segment.erase(segment);
  shard.entries.erase(it);
}

void ValueCache::EraseSegment(uint64_t segment) {
  Shard& shard = ShardFor(alloc::SegmentStart(segment));
  std::lock_guard<std::mutex> lock(shard.mutex);
  auto listed = shard.by_segment.find(segment);
  while (listed != shard.by_segment.end()) {
    // The last entry's erase drops the list itself.
    const bool last = listed->second.size() == 1;
    EraseLocked(shard, shard.entries.find(listed->second.front()));
    listed = last ? shard.by_segment.end() : listed;
  }
}

ValueCacheStats ValueCache::stats() const {
  ValueCacheStats stats;
  stats.hits = hits_.load();
  stats.misses = misses_.load();
  stats.ghost_hits = ghost_hits_.load();
  stats.capacity_bytes = shard_capacity_bytes_.load() * kShards;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    stats.cached_bytes += shard.bytes;
  }
  return stats;
}

}  // namespace kvs::lsm
