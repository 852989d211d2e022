// Region: what a split needs of the region it splits (Engine::SplitRegion
// does the split itself, in the catalog).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <shared_mutex>
#include <utility>
#include <vector>

#include "lsm/region.h"

namespace kvs::lsm {

uint64_t Region::SplitHandoff::Accounted() const {
  uint64_t accounted = 0;
  for (const Immutable& table : tables) accounted += table.accounted;
  return accounted;
}

Status Region::PrepareSplit(SplitHandoff* handoff) {
  // Every job starts under stall_mutex_: none starts while it is held, and
  // the one running ends without going on with a queued L0.
  std::unique_lock<std::mutex> stall_lock(stall_mutex_);
  ++quiesce_waiters_;
  l0_drained_.wait(stall_lock,
                   [this] { return !compacting_ && !draining_job_; });
  --quiesce_waiters_;
  // The end records' sync makes every write durable: the daughters'
  // recovery replays these logs, and their own writes go to new segments.
  SplitHandoff out;
  Status ended = background_error_;
  if (ended.ok()) ended = small_log_->EndTail();
  if (ended.ok()) ended = large_log_->EndTail();
  if (ended.ok()) ended = small_log_->ExportTail(&out.small_tail);
  if (ended.ok()) ended = large_log_->ExportTail(&out.large_tail);
  if (!ended.ok()) {
    ResumeAfterQuiesceLocked();  // the region goes on as it was
    return ended;
  }
  std::unique_lock<std::shared_mutex> lock(l0_mutex_);
  if (active_->EntryCount() > 0) MakeActiveImmutableLocked();
  out.tables = std::move(immutables_);  // their budget bytes with them
  immutables_.clear();
  immutable_queued_ = false;
  out.last_lsn = lsn_.load();
  *handoff = std::move(out);
  return Status::Ok();
}

Status Region::OpenDaughter(const RegionContext& context, std::string name,
                            uint64_t id, const RegionOptions& options,
                            SplitHandoff* handoff, bool upper,
                            std::unique_ptr<Region>* region) {
  std::unique_ptr<Region> opened(
      new Region(context, std::move(name), id, options));
  KVS_RETURN_IF_ERROR(opened->LoadLevels());
  KVS_RETURN_IF_ERROR(opened->OpenLogs(/*recover=*/true, handoff));
  opened->DrawIncarnation();
  {
    std::lock_guard<std::mutex> stall_lock(opened->stall_mutex_);
    std::unique_lock<std::shared_mutex> lock(opened->l0_mutex_);
    for (Immutable& table : handoff->tables) {
      // A table whose writes the levels hold already (none expected: the
      // parent's merges popped theirs) is left out.
      if (table.max_lsn <= opened->compacted_lsn_) continue;
      Immutable immutable = table;  // the table itself shared
      immutable.accounted = upper ? table.accounted : table.accounted / 2;
      table.accounted -= immutable.accounted;
      // Each daughter's share of the bytes, as far as a split at the
      // middle goes; the merge counts what it really holds.
      immutable.kv_bytes = table.kv_bytes / 2;
      opened->immutables_.push_back(std::move(immutable));
    }
    lock.unlock();
    // Merged now (and a drain the parent left goes on), while it serves.
    if (!opened->immutables_.empty() || !opened->draining_.empty()) {
      opened->StartCompactionLocked();
    }
  }
  *region = std::move(opened);
  return Status::Ok();
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
