// Region: what a split needs of the region it splits (Engine::SplitRegion
// does the split itself, in the catalog).

#include <algorithm>
#include <chrono>
#include <mutex>
#include <shared_mutex>

#include "lsm/region.h"

namespace kvs::lsm {

Status Region::PrepareSplit() {
  for (int round = 0; round < kSplitRoundsMax; ++round) {
    WaitForCompactions();
    KVS_RETURN_IF_ERROR(StoppedBy());
    bool merged = false;
    {
      std::shared_lock<std::shared_mutex> lock(l0_mutex_);
      merged = active_->EntryCount() == 0 && immutables_.empty() &&
               compacted_lsn_ == lsn_.load();
    }
    if (merged) {
      // The daughters continue the large log in segments of their own:
      // its current one ends here, durably (a sync of both logs).
      KVS_RETURN_IF_ERROR(large_log_->EndTail());
      return Sync();
    }
    // Switches the active L0 (or restarts the merge of L0s a full volume
    // left waiting); the next round waits for it.
    RequestCompaction();
  }
  {
    std::lock_guard<std::mutex> lock(stall_mutex_);
    if (!compaction_no_space_.ok()) return compaction_no_space_;
  }
  return Status::Busy("region " + name_ + ": L0 still not merged after " +
                      std::to_string(kSplitRoundsMax) +
                      " compactions; try the split again");
}

bool Region::MergeAhead(uint64_t wait_ms) {
  const uint64_t target = lsn_.load();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  const auto merged = [&] {
    std::shared_lock<std::shared_mutex> lock(l0_mutex_);
    return compacted_lsn_ >= target;
  };
  while (!merged()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    // Switches the active L0 if no compaction runs; one that runs gets
    // asked again once it ends.
    RequestCompaction();
    std::unique_lock<std::mutex> lock(stall_mutex_);
    if (!background_error_.ok()) return false;
    l0_drained_.wait_until(
        lock, std::min(deadline, std::chrono::steady_clock::now() +
                                     std::chrono::milliseconds(20)));
  }
  return true;
}

Status Region::SplitKey(std::string* key, bool* found) const {
  *found = false;
  std::shared_ptr<Level> largest;
  uint64_t level_bytes = 0;
  uint64_t l0_bytes = active_kv_bytes_.load(std::memory_order_relaxed);
  {
    std::shared_lock<std::shared_mutex> lock(l0_mutex_);
    for (const Immutable& immutable : immutables_)
      l0_bytes += immutable.kv_bytes;
    for (const auto& level : ReadOrderLevelsLocked()) {
      const uint64_t bytes = level->descriptor().kv_bytes;
      level_bytes += bytes;
      if (largest == nullptr || bytes > largest->descriptor().kv_bytes) {
        largest = level;
      }
    }
  }
  // Shared levels of a daughter count whole here: an upper bound of its
  // part, which only makes the index's answer more likely to be used.
  if (largest == nullptr ||
      2 * largest->descriptor().kv_bytes < level_bytes + l0_bytes) {
    return Status::Ok();
  }
  const std::string* upper =
      origin_.bounds.upper.has_value() ? &*origin_.bounds.upper : nullptr;
  return largest->tree().KeyAtFraction(origin_.bounds.lower, upper, 0.5, key,
                                       found);
}

}  // namespace kvs::lsm
