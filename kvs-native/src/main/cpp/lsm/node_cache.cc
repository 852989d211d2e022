#include "lsm/node_cache.h"

#include "alloc/device_offset.h"
#include "btree/node_format.h"
#include "io/aligned_buffer.h"
#include "util/check.h"
#include "util/limits.h"

namespace kvs::lsm {

NodeCache::NodeCache(io::File* file, size_t capacity_bytes)
    : file_(file), shard_capacity_bytes_(capacity_bytes / kShards) {}

NodeCache::Shard& NodeCache::ShardFor(uint64_t device_offset) {
  // Nodes are at least 4 KiB apart: mix the block number, not the offset.
  const uint64_t block = device_offset / limits::io_alignment_bytes;
  return shards_[(block * 0x9e3779b97f4a7c15ull) >> 60];
}

Status NodeCache::Read(uint64_t device_offset, size_t size, std::string* node) {
  SharedNode shared;
  KVS_RETURN_IF_ERROR(ReadShared(device_offset, size, &shared));
  node->assign(*shared.bytes);
  return Status::Ok();
}

Status NodeCache::ReadShared(uint64_t device_offset, size_t size,
                             SharedNode* node) {
  Shard& shard = ShardFor(device_offset);
  {
    std::lock_guard<std::mutex> lock(shard.mutex);
    const auto it = shard.entries.find(device_offset);
    if (it != shard.entries.end() && it->second.bytes->size() == size) {
      shard.lru.splice(shard.lru.begin(), shard.lru, it->second.position);
      node->bytes = it->second.bytes;
      node->validated = it->second.validated;
      hits_.fetch_add(1, std::memory_order_relaxed);
      return Status::Ok();
    }
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  io::AlignedBuffer buffer(size);
  KVS_RETURN_IF_ERROR(file_->Read(device_offset, buffer.size(), buffer.data()));
  bytes_read_.fetch_add(buffer.size(), std::memory_order_relaxed);
  auto bytes = std::make_shared<const std::string>(buffer.data(), size);
  // A read of the wrong size (a reader probing the root) or of damaged
  // bytes is cached unvalidated; the reader validates and reports it.
  const bool validated = btree::ValidateNode(*bytes).ok();
  node->bytes = bytes;
  node->validated = validated;
  std::lock_guard<std::mutex> lock(shard.mutex);
  Insert(shard, device_offset, std::move(bytes), validated);
  return Status::Ok();
}

void NodeCache::Insert(Shard& shard, uint64_t device_offset,
                       std::shared_ptr<const std::string> bytes,
                       bool validated) {
  const auto existing = shard.entries.find(device_offset);
  if (existing != shard.entries.end()) {
    EraseLocked(shard, existing);
  }
  if (shard.ghost.Take(device_offset)) {
    ghost_hits_.fetch_add(1, std::memory_order_relaxed);
  }
  if (bytes->size() > shard_capacity_bytes_.load(std::memory_order_relaxed)) {
    return;
  }
  shard.bytes += bytes->size();
  shard.lru.push_front(device_offset);
  std::list<uint64_t>& in_segment =
      shard.by_segment[alloc::SegmentOf(device_offset)];
  in_segment.push_front(device_offset);
  shard.entries[device_offset] = {std::move(bytes), validated,
                                  shard.lru.begin(), in_segment.begin()};
  TrimLocked(shard);
}

void NodeCache::EraseLocked(
    Shard& shard, std::unordered_map<uint64_t, Shard::Entry>::iterator it) {
  shard.bytes -= it->second.bytes->size();
  shard.lru.erase(it->second.position);
  const auto segment = shard.by_segment.find(alloc::SegmentOf(it->first));
  KVS_CHECK(segment != shard.by_segment.end());
  segment->second.erase(it->second.in_segment);
  if (segment->second.empty()) shard.by_segment.erase(segment);
  shard.entries.erase(it);
}

void NodeCache::TrimLocked(Shard& shard) {
  const size_t capacity = shard_capacity_bytes_.load(std::memory_order_relaxed);
  while (shard.bytes > capacity) {
    const uint64_t victim = shard.lru.back();
    shard.ghost.Add(victim);
    EraseLocked(shard, shard.entries.find(victim));
  }
}

void NodeCache::SetCapacity(size_t capacity_bytes, size_t ghost_bytes) {
  shard_capacity_bytes_.store(capacity_bytes / kShards,
                              std::memory_order_relaxed);
  for (Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    shard.ghost.set_capacity(ghost_bytes / kShards /
                             limits::io_alignment_bytes);
    TrimLocked(shard);
  }
}

void NodeCache::EraseSegment(uint64_t segment) {
  // A segment's nodes spread over every shard (shards go by block).
  for (Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    auto listed = shard.by_segment.find(segment);
    while (listed != shard.by_segment.end()) {
      // The last entry's erase drops the list itself.
      const bool last = listed->second.size() == 1;
      EraseLocked(shard, shard.entries.find(listed->second.front()));
      listed = last ? shard.by_segment.end() : listed;
    }
  }
}

NodeCacheStats NodeCache::stats() const {
  NodeCacheStats stats;
  stats.hits = hits_.load();
  stats.misses = misses_.load();
  stats.bytes_read = bytes_read_.load();
  stats.ghost_hits = ghost_hits_.load();
  stats.capacity_bytes = shard_capacity_bytes_.load() * kShards;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(const_cast<std::mutex&>(shard.mutex));
    stats.cached_bytes += shard.bytes;
  }
  return stats;
}

}  // namespace kvs::lsm
