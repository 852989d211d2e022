// Region: loading levels, compaction scheduling, and installing its output.
//
// Two jobs of a region may run at once, on the engine's compaction pool:
//
// - the L0 job (compacting_) merges the immutable L0s into L1, then runs
//   large-log GC; when L1 is full it renames L1 into a draining level (one
//   catalog batch; Send-Index ships it as an install of the same descriptor
//   under the draining level's number, emptying L1) and starts the drain
//   unless it runs;
// - the drain job (draining_job_) merges every draining level into L2 in
//   one pass -- those renamed while it ran wait for its next pass, up to
//   kDrainingLevelsMax, so that several L1s share one rewrite of L2 as
//   several L0s share one of L1 -- then pushes full levels below down as
//   one job did before.
//
// So a merge into the last level, which rewrites all of it (up to the
// dataset), no longer holds up the merges of L0s: they go on into a new L1,
// which stays about its capacity while draining levels may wait. Reads
// consult L0s, L1, the draining levels newest first, then L2 and below.
// Only the L0 job renames L1 (no merge into L1 runs then); only the drain
// job empties draining levels and touches the levels below L1.

#include <algorithm>
#include <chrono>
#include <utility>

#include "alloc/device_offset.h"
#include "lsm/region.h"
#include "util/check.h"
#include "util/coding.h"

namespace kvs::lsm {

std::string Region::StateCatalogKey(uint64_t id) {
  return CatalogPrefix(id) + "state";
}

std::string Region::OriginCatalogKey(uint64_t id) {
  return CatalogPrefix(id) + "origin";
}

std::string Region::LevelCatalogKey(uint64_t id, size_t level) {
  char digits[3];
  if (IsDrainingLevel(level)) {
    std::snprintf(digits, sizeof(digits), "%02zu", level);
    return CatalogPrefix(id) + "draining/" + digits;
  }
  // level 0 is L1; two digits keep catalog order equal to level order.
  std::snprintf(digits, sizeof(digits), "%02zu", level + 1);
  return CatalogPrefix(id) + "level/" + digits;
}

std::string Region::LevelKey(size_t level) const {
  return LevelCatalogKey(id_, level);
}

uint64_t Region::LevelCapacityBytes(size_t level) const {
  uint64_t capacity = options_.l0_size_bytes;
  for (size_t i = 0; i <= level; ++i) {
    capacity *= options_.growth_factor;
  }
  return capacity;
}

Status Region::LoadLevels() {
  const std::string prefix = CatalogPrefix(id_);
  const auto state = context_.volume->CatalogGet(StateCatalogKey(id_));
  if (state.has_value()) {
    if (state->size() != 8) {
      return Status::Corruption("malformed state of region " + name_);
    }
    compacted_lsn_ = coding::DecodeFixed64(state->data());
  }
  const auto origin = context_.volume->CatalogGet(OriginCatalogKey(id_));
  if (origin.has_value()) {
    KVS_RETURN_IF_ERROR(RegionOrigin::Decode(*origin, &origin_));
  }
  for (const auto& [key, value] :
       context_.volume->CatalogScan(prefix + "level/")) {
    const size_t number = std::stoul(key.substr(prefix.size() + 6));
    if (number == 0 || number > 64) {
      return Status::Corruption("bad level key " + key);
    }
    LevelDescriptor descriptor;
    KVS_RETURN_IF_ERROR(LevelDescriptor::Decode(value, &descriptor));
    std::shared_ptr<Level> level;
    KVS_RETURN_IF_ERROR(Level::Open(context_.volume->file(), context_.nodes,
                                    std::move(descriptor), &level));
    if (levels_.size() < number) {
      levels_.resize(number);
    }
    levels_[number - 1] = std::move(level);
  }
  // Draining levels a crash (or a full volume) left: Open starts the drain.
  for (const auto& [key, value] :
       context_.volume->CatalogScan(prefix + "draining/")) {
    const std::string digits = key.substr(prefix.size() + 9);
    const size_t number = std::strtoul(digits.c_str(), nullptr, 10);
    if (digits.size() != 2 || !IsDrainingLevel(number)) {
      return Status::Corruption("bad draining level key " + key);
    }
    LevelDescriptor descriptor;
    KVS_RETURN_IF_ERROR(LevelDescriptor::Decode(value, &descriptor));
    KVS_RETURN_IF_ERROR(Level::Open(context_.volume->file(), context_.nodes,
                                    std::move(descriptor), &draining_[number]));
  }
  std::lock_guard<std::mutex> lock(gc_mutex_);
  for (const auto& [key, value] :
       context_.volume->CatalogScan(prefix + "gc/")) {
    if (value.size() != 8) {
      return Status::Corruption("malformed garbage entry " + key);
    }
    large_garbage_[std::stoull(key.substr(prefix.size() + 3), nullptr, 16)] =
        coding::DecodeFixed64(value.data());
  }
  for (const auto& [key, value] :
       context_.volume->CatalogScan(prefix + "sealed/")) {
    if (value.size() != 16) {
      return Status::Corruption("malformed sealed-segment entry " + key);
    }
    large_sealed_[std::stoull(key.substr(prefix.size() + 7), nullptr, 16)] = {
        coding::DecodeFixed64(value.data()),
        coding::DecodeFixed64(value.data() + 8)};
  }
  return Status::Ok();
}

void Region::WaitForCompactions() {
  {
    std::unique_lock<std::mutex> lock(stall_mutex_);
    l0_drained_.wait(lock, [this] {
      return !compacting_ && !draining_job_ && !immutable_queued_;
    });
  }
  // A level one job retired while the other still read it stays pinned
  // until a later job; with none running, none reads it now (CI flake of
  // 2026-11-30: 3 segments still reserved after the wait).
  ReclaimRetired();
}

std::vector<LevelDescriptor> Region::LevelDescriptors() const {
  std::shared_lock<std::shared_mutex> lock(l0_mutex_);
  std::vector<LevelDescriptor> descriptors;
  for (const auto& level : levels_) {
    descriptors.push_back(level ? level->descriptor() : LevelDescriptor{});
  }
  return descriptors;
}

std::vector<std::pair<size_t, std::shared_ptr<Level>>>
Region::NumberedLevelsLocked() const {
  std::vector<std::pair<size_t, std::shared_ptr<Level>>> numbered;
  if (!levels_.empty() && levels_[0] != nullptr) {
    numbered.emplace_back(0, levels_[0]);
  }
  for (const auto& [number, level] : draining_) {
    numbered.emplace_back(number, level);  // newest first
  }
  for (size_t level = 1; level < levels_.size(); ++level) {
    if (levels_[level] != nullptr) numbered.emplace_back(level, levels_[level]);
  }
  return numbered;
}

std::vector<std::shared_ptr<Level>> Region::ReadOrderLevelsLocked() const {
  std::vector<std::shared_ptr<Level>> levels;
  for (auto& [number, level] : NumberedLevelsLocked()) {
    levels.push_back(std::move(level));
  }
  return levels;
}

std::shared_ptr<Level>& Region::SlotLocked(size_t number) {
  if (IsDrainingLevel(number)) return draining_[number];
  if (levels_.size() <= number) levels_.resize(number + 1);
  return levels_[number];
}

uint64_t Region::EstimateShadowedBytes(const L0Table& table,
                                       const Level& last) {
  uint64_t bytes = 0;
  std::string_view previous_key;
  bool first = true;
  L0Table::Iterator it(&table);
  for (it.SeekToFirst(); it.Valid(); it.Next()) {
    const L0Table::Entry& entry = it.entry();
    if (!first && entry.key == previous_key) {
      continue;  // an older version within the table
    }
    first = false;
    previous_key = entry.key;
    if (!last.MayContain(entry.key)) {
      continue;
    }
    // The hidden version's size is unknown; the new one's stands in for it.
    uint64_t value_bytes = entry.payload.size();
    LogPointer pointer;
    if (entry.kind == kL0LargePointer &&
        DecodeLogPointer(entry.payload, &pointer)) {
      value_bytes = pointer.record_size;
    }
    bytes += entry.key.size() + value_bytes;
  }
  return bytes;
}

bool Region::TooMuchStaleData() const {
  std::shared_lock<std::shared_mutex> lock(l0_mutex_);
  const auto levels = NumberedLevelsLocked();
  const Level* last = levels.empty() ? nullptr : levels.back().second.get();
  return levels.size() >= 2 &&
         static_cast<double>(shadowed_bytes_.load()) >
             options_.stale_fraction_max *
                 static_cast<double>(last->descriptor().kv_bytes);
}

namespace {

// Runs `compact` and adds its wall time to `micros` if it compacted
// (`compactions` moved): monitoring.
template <typename Compact>
Status Timed(std::atomic<uint64_t>* compactions, std::atomic<uint64_t>* micros,
             Compact&& compact) {
  const auto start = std::chrono::steady_clock::now();
  const uint64_t before = compactions->load(std::memory_order_relaxed);
  Status done = compact();
  if (compactions->load(std::memory_order_relaxed) != before) {
    micros->fetch_add(static_cast<uint64_t>(
                          std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count()),
                      std::memory_order_relaxed);
  }
  return done;
}

}  // namespace

void Region::RecordJobStatusLocked(const Status& status) {
  if (status.IsNoSpace()) {
    // Not the region's end: what was not compacted stays (an immutable L0,
    // the draining level), and the next writer that needs room (or the
    // engine's memory budget) tries again; until space exists, writers get
    // this error.
    compaction_no_space_ = status.WithContext(
        "region " + name_ + ": compaction found the volume full: ");
  } else if (!status.ok() && background_error_.ok()) {
    compaction_no_space_ = Status::Ok();
    background_error_ = Status::FromCode(
        status.code(), "region " + name_ + " stopped: compaction failed: " +
                           std::string(status.message()));
  } else if (status.ok()) {
    compaction_no_space_ = Status::Ok();
  }
}

void Region::ResumeAfterQuiesceLocked() {
  if (!immutable_queued_ || quiesce_waiters_ > 0 || compacting_) return;
  if (background_error_.ok()) {
    StartCompactionLocked();  // an L0 switched while the last job ran
  } else {
    // A job failed meanwhile (a drain): the L0 is left like one whose own
    // compaction failed (a close waits for no job that will never run).
    immutable_queued_ = false;
  }
}

void Region::BackgroundCompaction() {
  bool has_l0 = false;
  {
    std::shared_lock<std::shared_mutex> lock(l0_mutex_);
    has_l0 = !immutables_.empty();
  }
  Status status = Status::Ok();
  if (has_l0) {
    status = Timed(&compactions_, &compaction_micros_,
                   [this] { return CompactImmutable(); });
  }
  if (status.ok()) status = MaybeStartDrain();
  ReclaimRetired();
  if (status.ok()) {
    status = CollectGarbage();
  }
  std::lock_guard<std::mutex> lock(stall_mutex_);
  RecordJobStatusLocked(status);
  compacting_ = false;
  bool waiting = false;
  {
    std::shared_lock<std::shared_mutex> l0_lock(l0_mutex_);
    waiting = !immutables_.empty();
  }
  if (!status.ok()) {
    // L0s queued behind a failed job are left like one whose own
    // compaction failed.
    immutable_queued_ = false;
  } else if (waiting && quiesce_waiters_ == 0) {
    StartCompactionLocked();  // L0s switched while this job ran
  } else {
    immutable_queued_ = waiting;  // ReportState starts the next job
  }
  l0_drained_.notify_all();
}

bool Region::L1WantsDrain() const {
  bool deeper = false;
  uint64_t l1_bytes = 0;
  {
    std::shared_lock<std::shared_mutex> lock(l0_mutex_);
    if (levels_.empty() || levels_[0] == nullptr) return false;
    l1_bytes = levels_[0]->descriptor().kv_bytes;
    for (size_t below = 1; below < levels_.size(); ++below) {
      deeper |= levels_[below] != nullptr;
    }
  }
  return l1_bytes > LevelCapacityBytes(0) || (deeper && TooMuchStaleData());
}

Status Region::MaybeStartDrain() {
  {
    std::lock_guard<std::mutex> stall_lock(stall_mutex_);
    if (!background_error_.ok() || quiesce_waiters_ > 0) {
      // A catch-up waiting for no job to run starts the next L0 job once
      // done, which comes back here.
      return Status::Ok();
    }
  }
  if (L1WantsDrain()) {
    // L1 becomes the newest draining level: the same descriptor under
    // another key, in one batch. No merge into L1 runs: this is the L0 job.
    std::lock_guard<std::mutex> install_lock(install_mutex_);
    std::shared_ptr<Level> l1;
    uint64_t compacted_lsn = 0;
    size_t number = kDrainingLevelLast;
    {
      std::shared_lock<std::shared_mutex> lock(l0_mutex_);
      l1 = levels_[0];
      compacted_lsn = compacted_lsn_;
      if (!draining_.empty()) number = draining_.begin()->first - 1;
    }
    // With kDrainingLevelsMax waiting, L1 takes merges on until the drain
    // has taken them.
    if (number >= kDrainingLevelFirst) {
      alloc::MetadataBatch batch;
      batch.Delete(LevelKey(0));
      batch.Put(LevelKey(number), l1->descriptor().Encode());
      KVS_RETURN_IF_ERROR(context_.volume->Commit(batch));
      {
        std::unique_lock<std::shared_mutex> lock(l0_mutex_);
        draining_[number] = std::move(levels_[0]);
      }
      if (context_.on_level_installed) {
        context_.on_level_installed(id_, number, l1->descriptor(), 0,
                                    compacted_lsn);
      }
    }
  }
  {
    std::lock_guard<std::mutex> stall_lock(stall_mutex_);
    if (draining_job_ || !background_error_.ok() || quiesce_waiters_ > 0) {
      return Status::Ok();  // one drain at a time
    }
    std::shared_lock<std::shared_mutex> lock(l0_mutex_);
    if (draining_.empty()) return Status::Ok();
    draining_job_ = true;
  }
  context_.compactions->Submit([this] { BackgroundDrain(); });
  return Status::Ok();
}

void Region::BackgroundDrain() {
  const auto draining = [this] {
    std::shared_lock<std::shared_mutex> lock(l0_mutex_);
    return !draining_.empty();
  };
  Status status = Status::Ok();
  while (status.ok() && draining()) {
    status = Timed(&compactions_, &compaction_micros_,
                   [this] { return CompactDraining(); });
  }
  // Then push full levels below L1 down, one at a time, top first -- or
  // every level, when stale versions in the last level hold too much space.
  const bool merge_all = status.ok() && TooMuchStaleData();
  for (size_t level = 1; status.ok(); ++level) {
    std::shared_ptr<Level> current;
    bool deeper = false;
    {
      std::shared_lock<std::shared_mutex> lock(l0_mutex_);
      if (level >= levels_.size()) break;
      current = levels_[level];
      for (size_t below = level + 1; below < levels_.size(); ++below) {
        deeper |= levels_[below] != nullptr;
      }
    }
    if (current != nullptr &&
        ((merge_all && deeper) ||
         current->descriptor().kv_bytes > LevelCapacityBytes(level))) {
      status = Timed(&compactions_, &compaction_micros_,
                     [this, level] { return CompactLevel(level); });
    }
  }
  if (status.ok()) {
    // Nothing above the last level: nothing hides its entries any more.
    std::shared_lock<std::shared_mutex> lock(l0_mutex_);
    if (NumberedLevelsLocked().size() <= 1) shadowed_bytes_.store(0);
  }
  ReclaimRetired();
  const bool again = status.ok() && (L1WantsDrain() || draining());
  std::lock_guard<std::mutex> lock(stall_mutex_);
  RecordJobStatusLocked(status);
  draining_job_ = false;
  if (again && !compacting_ && quiesce_waiters_ == 0 &&
      background_error_.ok()) {
    // L1 filled up (or was renamed) after this drain's last pass: an L0 job
    // (with or without L0s to merge) renames it and starts the next drain.
    StartCompactionLocked();
  }
  l0_drained_.notify_all();
}

void Region::PrepareJob(CompactionJob* job, size_t output) const {
  job->region_id = id_;
  job->bounds = origin_.bounds;
  job->placement = options_.placement;
  job->bloom_bits_per_key = options_.bloom_bits_per_key;
  if (context_.on_index_segment) {
    job->on_index_segment = [this, output](uint64_t segment,
                                           std::string_view bytes) {
      context_.on_index_segment(id_, output, segment, bytes);
      return Status::Ok();
    };
  }
  if (context_.on_log_append) {
    job->on_medium_append = [this](const log::AppendedBytes& appended) {
      context_.on_log_append(id_, log::LogKind::kMedium, appended);
    };
  }
}

Status Region::CompactImmutable() {
  CompactionJob job;
  uint64_t small_position, large_position, max_lsn;
  size_t merged = 0;
  {
    // Every L0 waiting in line, merged together: they share one rewrite of
    // L1 (a tiered step while compaction is behind). The oldest is the only
    // one whose writes all follow the levels'; the newest's positions and
    // LSN are those of all of them.
    std::shared_lock<std::shared_mutex> lock(l0_mutex_);
    KVS_CHECK(!immutables_.empty());
    merged = immutables_.size();
    for (size_t i = merged; i-- > 0;) {
      job.source_l0s.push_back(immutables_[i].table);
    }
    const Immutable& newest = immutables_[merged - 1];
    job.target = levels_.empty() ? nullptr : levels_[0];
    job.last_level =
        draining_.empty() &&
        std::none_of(levels_.begin() + std::min<size_t>(1, levels_.size()),
                     levels_.end(),
                     [](const auto& level) { return level != nullptr; });
    small_position = newest.small_position;
    large_position = newest.large_position;
    max_lsn = newest.max_lsn;
  }
  std::shared_ptr<Level> last;
  {
    std::shared_lock<std::shared_mutex> lock(l0_mutex_);
    for (const auto& [number, level] : NumberedLevelsLocked()) {
      if (number != 0) last = level;
    }
  }
  if (last != nullptr) {
    for (const auto& table : job.source_l0s) {
      shadowed_bytes_.fetch_add(EstimateShadowedBytes(*table, *last));
    }
  }
  // Levels will point at these large values: they must be durable first.
  KVS_RETURN_IF_ERROR(large_log_->SyncTo(large_position));
  PrepareJob(&job, 0);
  CompactionResult result;
  KVS_RETURN_IF_ERROR(RunCompaction(context_.volume, job, &result));
  alloc::MetadataBatch batch;
  batch.Put(StateCatalogKey(id_), coding::Fixed64String(max_lsn));
  // The write-ahead log before the switch is now in L1.
  const std::vector<log::ReleasedSegment> small_released =
      small_log_->ReleaseSegmentsBefore(alloc::SegmentOf(small_position),
                                        &batch);
  KVS_RETURN_IF_ERROR(Install(0, result, batch, {}, max_lsn));
  small_log_->Forget(small_released);
  ReportReleased(log::LogKind::kSmall, small_released);
  l0s_merged_.fetch_add(merged, std::memory_order_relaxed);
  l0_merges_.fetch_add(1, std::memory_order_relaxed);
  uint64_t released = 0;
  {
    std::unique_lock<std::shared_mutex> lock(l0_mutex_);
    for (size_t i = 0; i < merged; ++i) {
      released += immutables_.front().accounted;
      immutables_.pop_front();
    }
  }
  {
    // Writers waiting for room switch now (in line behind this job); they
    // checked immutables_ holding stall_mutex_, so none misses this.
    std::lock_guard<std::mutex> stall_lock(stall_mutex_);
  }
  l0_drained_.notify_all();
  if (context_.l0_budget != nullptr) {
    // Readers may still hold the table for a moment; its memory is gone
    // when they let go, which is soon enough for a budget.
    context_.l0_budget->Release(released);
  }
  return Status::Ok();
}

Status Region::CompactLevel(size_t source) {
  CompactionJob job;
  {
    std::shared_lock<std::shared_mutex> lock(l0_mutex_);
    job.source_levels = {levels_[source]};
    job.target = source + 1 < levels_.size() ? levels_[source + 1] : nullptr;
    job.last_level =
        source + 2 >= levels_.size() ||
        std::none_of(levels_.begin() + static_cast<long>(source) + 2,
                     levels_.end(),
                     [](const auto& level) { return level != nullptr; });
  }
  PrepareJob(&job, source + 1);
  CompactionResult result;
  KVS_RETURN_IF_ERROR(RunCompaction(context_.volume, job, &result));
  alloc::MetadataBatch batch;
  batch.Delete(LevelKey(source));
  return Install(source + 1, result, batch, {source}, std::nullopt);
}

Status Region::CompactDraining() {
  CompactionJob job;
  std::vector<size_t> drained;
  {
    std::shared_lock<std::shared_mutex> lock(l0_mutex_);
    KVS_CHECK(!draining_.empty());
    for (const auto& [number, level] : draining_) {
      drained.push_back(number);
      job.source_levels.push_back(level);  // newest first
    }
    job.target = levels_.size() > 1 ? levels_[1] : nullptr;
    job.last_level =
        levels_.size() <= 2 ||
        std::none_of(levels_.begin() + 2, levels_.end(),
                     [](const auto& level) { return level != nullptr; });
  }
  PrepareJob(&job, 1);
  CompactionResult result;
  KVS_RETURN_IF_ERROR(RunCompaction(context_.volume, job, &result));
  alloc::MetadataBatch batch;
  for (const size_t number : drained) batch.Delete(LevelKey(number));
  return Install(1, result, batch, drained, std::nullopt);
}

Status Region::Install(size_t output, CompactionResult& result,
                       alloc::MetadataBatch& batch,
                       const std::vector<size_t>& merged_sources,
                       std::optional<uint64_t> new_compacted_lsn) {
  std::lock_guard<std::mutex> install_lock(install_mutex_);
  std::shared_ptr<Level> level;
  if (!result.output.empty()) {
    const Status opened = Level::Open(context_.volume->file(), context_.nodes,
                                      result.output, &level);
    if (!opened.ok()) {
      for (uint64_t segment : result.new_segments) {
        context_.volume->Unreserve(segment);
      }
      return opened;
    }
  }
  for (uint64_t segment : result.new_segments) {
    batch.Allocate(segment);
  }
  for (uint64_t segment : result.obsolete_segments) {
    batch.FreeDeferred(segment);
  }
  if (level != nullptr) {
    batch.Put(LevelKey(output), result.output.Encode());
  } else {
    batch.Delete(LevelKey(output));
  }
  std::vector<uint64_t> dead;
  {
    std::lock_guard<std::mutex> lock(gc_mutex_);
    for (const auto& [segment, bytes] : result.large_garbage) {
      large_garbage_[segment] += bytes;
      batch.Put(CatalogPrefix(id_) + "gc/" + coding::Hex16(segment),
                coding::Fixed64String(large_garbage_[segment]));
    }
    // A segment whose every record this compaction dropped the last
    // pointer to is released in the same batch: no pointer outlives it.
    dead = DeadSegmentsLocked();
  }
  const std::vector<log::ReleasedSegment> released =
      ReleaseSegments(dead, &batch);
  const Status committed = context_.volume->Commit(batch);
  if (!committed.ok()) {
    // Nothing of the compaction took effect: a later one (after a NoSpace)
    // redoes it from the same inputs, so take back what it counted.
    for (uint64_t segment : result.new_segments) {
      context_.volume->Unreserve(segment);
    }
    std::lock_guard<std::mutex> lock(gc_mutex_);
    for (const auto& [segment, bytes] : result.large_garbage) {
      large_garbage_[segment] -= bytes;
    }
    return committed;
  }
  large_log_->Forget(released);
  {
    std::lock_guard<std::mutex> lock(gc_mutex_);
    ForgetSegmentsLocked(dead);
  }
  Retired retired{{}, result.obsolete_segments};
  uint64_t compacted_lsn = 0;
  {
    std::unique_lock<std::shared_mutex> lock(l0_mutex_);
    std::shared_ptr<Level>& slot = SlotLocked(output);
    retired.levels.push_back(std::move(slot));
    slot = std::move(level);
    for (const size_t source : merged_sources) {
      retired.levels.push_back(std::move(SlotLocked(source)));
      if (IsDrainingLevel(source)) draining_.erase(source);
    }
    if (new_compacted_lsn.has_value()) compacted_lsn_ = *new_compacted_lsn;
    compacted_lsn = compacted_lsn_;
  }
  compactions_.fetch_add(1, std::memory_order_relaxed);
  compaction_bytes_.fetch_add(result.bytes_written, std::memory_order_relaxed);
  compaction_read_bytes_.fetch_add(result.bytes_read,
                                   std::memory_order_relaxed);
  medium_log_bytes_.fetch_add(result.medium_bytes_written,
                              std::memory_order_relaxed);
  const size_t slot = std::min(output, kStatsLevels - 1);
  level_read_bytes_[slot].fetch_add(result.bytes_read,
                                    std::memory_order_relaxed);
  level_written_bytes_[slot].fetch_add(result.bytes_written,
                                       std::memory_order_relaxed);
  if (context_.on_level_installed) {
    // One level is emptied with the install (a Send-Index INSTALL-LEVEL
    // names one); other draining levels merged in go after, each as an
    // empty install. A backup in between holds them beside the new L2:
    // their entries are the newest of what it merged, so it reads the same.
    std::optional<size_t> emptied;
    if (!merged_sources.empty()) emptied = merged_sources.back();
    context_.on_level_installed(id_, output, result.output, emptied,
                                compacted_lsn);
    for (size_t i = 0; i + 1 < merged_sources.size(); ++i) {
      context_.on_level_installed(id_, merged_sources[i], LevelDescriptor{},
                                  std::nullopt, compacted_lsn);
    }
  }
  ReportReleased(log::LogKind::kLarge, released);
  std::lock_guard<std::mutex> lock(retired_mutex_);
  retired_.push_back(std::move(retired));
  return Status::Ok();
}

void Region::ReclaimRetired() {
  std::vector<uint64_t> released;
  {
    std::lock_guard<std::mutex> lock(retired_mutex_);
    for (auto it = retired_.begin(); it != retired_.end();) {
      // Only the retired list holds the levels: no reader can reach them.
      if (std::all_of(it->levels.begin(), it->levels.end(),
                      [](const auto& level) {
                        return level == nullptr || level.use_count() == 1;
                      })) {
        released.insert(released.end(), it->segments.begin(),
                        it->segments.end());
        it = retired_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (uint64_t segment : released) {
    context_.nodes->EraseSegment(segment);
    context_.records->Forget(segment);
    context_.volume->ReleaseDeferred(segment);
  }
}

}  // namespace kvs::lsm
