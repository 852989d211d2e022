#include "channel/replica_sets.h"

#include <algorithm>

namespace kvs::channel {

Status ReplicaSets::Get(uint64_t tag, size_t count, size_t bytes,
                        const Make& make,
                        std::vector<std::shared_ptr<ReplicaBuffer>>* buffers) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<ReplicaBuffer>>& set = sets_[tag];
  const bool reusable =
      set.size() == count &&
      std::all_of(set.begin(), set.end(),
                  [&](const auto& buffer) { return buffer->size() == bytes; });
  if (reusable) {
    for (const auto& buffer : set) buffer->Zero(0, buffer->size());
  } else {
    for (const auto& buffer : set) by_key_.erase(buffer->remote().key);
    set.clear();
    for (size_t i = 0; i < count; ++i) {
      std::shared_ptr<ReplicaBuffer> buffer;
      const Status made = make(&buffer);
      if (!made.ok()) {
        for (const auto& each : set) by_key_.erase(each->remote().key);
        set.clear();
        return made;
      }
      by_key_[buffer->remote().key] = buffer;
      set.push_back(std::move(buffer));
    }
  }
  *buffers = set;
  return Status::Ok();
}

std::shared_ptr<ReplicaBuffer> ReplicaSets::Find(uint64_t key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : it->second;
}

void ReplicaSets::Clear() {
  std::map<uint64_t, std::vector<std::shared_ptr<ReplicaBuffer>>> sets;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    sets.swap(sets_);
    by_key_.clear();
  }
  // The buffers go outside the lock (a buffer's last reference frees it).
}

}  // namespace kvs::channel
