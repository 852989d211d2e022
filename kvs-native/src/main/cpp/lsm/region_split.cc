// Region: what a split needs of the region it splits (Engine::SplitRegion
// does the split itself, in the catalog).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <shared_mutex>
#include <vector>

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
  const Tables tables = TablesNow();
  const std::vector<std::shared_ptr<Level>>& levels = tables.levels;
  uint64_t level_bytes = 0;
  for (const auto& level : levels) level_bytes += level->descriptor().kv_bytes;
  // L0's keys, sorted, with their bytes summed up to each (a sample of at
  // most kSplitKeyL0Samples entries, each standing for its stride).
  std::vector<std::shared_ptr<L0Table>> l0s = tables.immutables;
  l0s.push_back(tables.active);
  size_t l0_entries = 0;
  for (const auto& table : l0s) l0_entries += table->EntryCount();
  const size_t stride =
      std::max<size_t>(1, l0_entries / kSplitKeyL0Samples + 1);
  std::vector<std::pair<std::string, double>> l0_keys;
  size_t seen = 0;
  for (const auto& table : l0s) {
    L0Table::Iterator it(table.get());
    for (it.SeekToFirst(); it.Valid(); it.Next(), ++seen) {
      if (seen % stride != 0) continue;
      const L0Table::Entry& entry = it.entry();
      l0_keys.emplace_back(
          std::string(entry.key),
          static_cast<double>(stride *
                              (entry.key.size() + entry.payload.size())));
    }
  }
  std::sort(l0_keys.begin(), l0_keys.end());
  std::vector<double> l0_prefix(l0_keys.size() + 1, 0);
  for (size_t i = 0; i < l0_keys.size(); ++i) {
    l0_prefix[i + 1] = l0_prefix[i] + l0_keys[i].second;
  }
  // L0's bytes below `bound` (in key order).
  const auto l0_prefix_at = [&](std::string_view bound) {
    const auto first_not_below =
        std::lower_bound(l0_keys.begin(), l0_keys.end(), bound,
                         [](const auto& entry, std::string_view k) {
                           return std::string_view(entry.first) < k;
                         });
    return l0_prefix[static_cast<size_t>(first_not_below - l0_keys.begin())];
  };
  const double l0_from = l0_prefix_at(origin_.bounds.lower);
  const double l0_bytes =
      (origin_.bounds.upper.has_value() ? l0_prefix_at(*origin_.bounds.upper)
                                        : l0_prefix.back()) -
      l0_from;
  if (levels.empty() || static_cast<double>(level_bytes) < l0_bytes) {
    return Status::Ok();  // most of it in L0: the caller walks the keys
  }
  const std::string& lower = origin_.bounds.lower;
  const std::string* upper =
      origin_.bounds.upper.has_value() ? &*origin_.bounds.upper : nullptr;
  // Each level's weight: its bytes inside the bounds (a daughter's shared
  // levels hold its sibling's keys too).
  std::vector<double> inside(levels.size(), 0);
  double total = 0;
  size_t largest = 0;
  for (size_t i = 0; i < levels.size(); ++i) {
    KVS_RETURN_IF_ERROR(
        levels[i]->tree().EstimateFraction(lower, upper, &inside[i]));
    const double weight =
        inside[i] * static_cast<double>(levels[i]->descriptor().kv_bytes);
    total += weight;
    if (weight >
        inside[largest] *
            static_cast<double>(levels[largest]->descriptor().kv_bytes)) {
      largest = i;
    }
  }
  if (total <= 0) return Status::Ok();
  total += l0_bytes;
  // The share of the region's bytes below `candidate`: every level weighted
  // by its bytes inside the bounds, and L0's.
  const auto share_below = [&](const std::string& candidate,
                               double* share) -> Status {
    double below = l0_prefix_at(candidate) - l0_from;
    for (size_t i = 0; i < levels.size(); ++i) {
      if (inside[i] <= 0) continue;
      double fraction = 0;
      KVS_RETURN_IF_ERROR(
          levels[i]->tree().EstimateFraction(lower, &candidate, &fraction));
      below += std::min(1.0, fraction / inside[i]) * inside[i] *
               static_cast<double>(levels[i]->descriptor().kv_bytes);
    }
    *share = below / total;
    return Status::Ok();
  };
  // The candidates are the largest level's keys: bisect on where in that
  // level, so that half of the region's bytes lie below (newer levels and
  // L0 may hold other ranges than the largest level: an append-only load's
  // newest keys are all above its keys).
  double from = 0, to = 1, best = 2;
  for (int round = 0; round < kSplitKeyRounds; ++round) {
    const double at = (from + to) / 2;
    std::string candidate;
    bool has = false;
    KVS_RETURN_IF_ERROR(levels[largest]->tree().KeyAtFraction(
        lower, upper, at, &candidate, &has));
    if (!has) break;
    double share = 0;
    KVS_RETURN_IF_ERROR(share_below(candidate, &share));
    if (std::abs(share - 0.5) < best) {
      best = std::abs(share - 0.5);
      *key = std::move(candidate);
      *found = true;
    }
    (share < 0.5 ? from : to) = at;
  }
  return Status::Ok();
}

}  // namespace kvs::lsm
