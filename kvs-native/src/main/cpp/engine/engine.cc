#include "engine/engine.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>

#include "alloc/superblock.h"
#include "engine/engine_catalog.h"
#include "io/aligned_buffer.h"
#include "lsm/cache_split.h"
#include "util/coding.h"
#include "util/thread_name.h"

namespace kvs::engine {
namespace {

// Whether `file` is empty or no superblock was ever written to it: both
// superblock blocks read as zeros. Formatting grows the file and writes the
// checkpoint before it publishes them with the superblock, so a crash while
// formatting leaves such a file; no write can have been acknowledged on it.
Status NeverFormatted(io::File* file, bool* never_formatted) {
  static_assert(alloc::kSuperblockOffsets[0] == 0 &&
                alloc::kSuperblockOffsets[1] == alloc::kSuperblockBytes);
  const size_t bytes = 2 * alloc::kSuperblockBytes;
  if (file->Size() < bytes) {
    *never_formatted = file->Size() == 0;
    return Status::Ok();
  }
  io::AlignedBuffer blocks(bytes);
  KVS_RETURN_IF_ERROR(file->Read(0, bytes, blocks.data()));
  const std::string_view view = blocks.view();
  *never_formatted = view.find_first_not_of('\0') == std::string_view::npos;
  return Status::Ok();
}

}  // namespace

EngineStats Engine::Stats() const {
  const lsm::NodeCacheStats cache = nodes_.stats();
  EngineStats stats;
  stats.cache_hits = cache.hits;
  stats.cache_misses = cache.misses;
  stats.cache_bytes = cache.cached_bytes;
  stats.cache_capacity_bytes = static_cast<uint64_t>(
      static_cast<double>(options_.memory_budget_bytes) * options_.cache_share);
  stats.l0_bytes = l0_budget_.used_bytes();
  stats.l0_budget_bytes = l0_budget_.limit_bytes();
  stats.node_cache_capacity_bytes = cache.capacity_bytes;
  stats.value_cache_capacity_bytes = values_.stats().capacity_bytes;
  stats.cache_split_moves = cache_split_moves_.load(std::memory_order_relaxed);
  return stats;
}

Engine::Engine(const EngineOptions& options,
               std::unique_ptr<alloc::Volume> volume)
    : options_(options),
      volume_(std::move(volume)),
      sync_group_(volume_->file()),
      nodes_(volume_->file(),
             static_cast<size_t>(
                 static_cast<double>(options.memory_budget_bytes) *
                 options.cache_share * (1.0 - options.value_cache_share))),
      values_(
          static_cast<size_t>(static_cast<double>(options.memory_budget_bytes) *
                              options.cache_share * options.value_cache_share)),
      records_(volume_->file(), &values_),
      l0_budget_(static_cast<uint64_t>(
          static_cast<double>(options.memory_budget_bytes) *
          (1.0 - options.cache_share))),
      compactions_(std::max(1u, options.compaction_threads),
                   kThreadCompaction) {
  // A segment's next use must not read through what the caches kept of its
  // last one (a record nonce and values, nodes): it may have been freed by a
  // path that never told them (a region dropped, a replica adopted or
  // trimmed).
  volume_->SetReuseHook([this](uint64_t segment) {
    nodes_.EraseSegment(segment);
    records_.Forget(segment);
  });
  SplitCache(options_.value_cache_share);
  split_checked_ = std::chrono::steady_clock::now();
  maintenance_ = std::thread([this] {
    SetThreadName(kThreadMaintenance);
    MaintenanceLoop();
  });
}

Engine::~Engine() {
  {
    std::lock_guard<std::mutex> lock(maintenance_mutex_);
    stopping_ = true;
  }
  maintenance_wakeup_.notify_all();
  maintenance_.join();
  std::unique_lock<std::mutex> lock(mutex_);
  settled_.wait(lock, [this] { return changing_.empty(); });
  for (auto& [name, region] : regions_) {
    (void)region->Sync();  // best effort: errors were reported to writers
  }
  regions_.clear();
  volume_->SetReuseHook(nullptr);  // the caches go before the volume
}

Status Engine::Open(const std::string& path, const EngineOptions& options,
                    bool create_if_missing, std::unique_ptr<Engine>* engine) {
  std::unique_ptr<io::File> file;
  KVS_RETURN_IF_ERROR(io::OpenPosixFile(
      path, {.direct_io = options.direct_io, .create = create_if_missing},
      &file));
  // Only regular files are formatted here: a block device whose first
  // 8 KiB are zeros may still hold another file system's data (btrfs keeps
  // its superblock at 64 KiB), so it is never formatted implicitly.
  struct stat path_stat;
  const bool regular_file =
      ::stat(path.c_str(), &path_stat) == 0 && S_ISREG(path_stat.st_mode);
  return Open(std::move(file), options, create_if_missing && regular_file,
              engine);
}

Status Engine::Open(std::unique_ptr<io::File> file,
                    const EngineOptions& options, bool create_if_missing,
                    std::unique_ptr<Engine>* engine) {
  std::unique_ptr<alloc::Volume> volume;
  bool never_formatted = false;
  if (create_if_missing) {
    KVS_RETURN_IF_ERROR(NeverFormatted(file.get(), &never_formatted));
  }
  Status status;
  if (never_formatted) {
    status = alloc::Volume::Create(std::move(file), options.volume, &volume);
  } else {
    status = alloc::Volume::Open(std::move(file), options.volume, &volume);
  }
  KVS_RETURN_IF_ERROR(status);
  engine->reset(new Engine(options, std::move(volume)));
  return Status::Ok();
}

void Engine::SetReplicationTap(lsm::ReplicationTap* tap) {
  std::unique_lock<std::shared_mutex> lock(tap_mutex_);
  tap_ = tap;
  tapped_.store(tap != nullptr, std::memory_order_release);
}

template <typename Event>
void Engine::Tap(const Event& event) const {
  // Without a tap (no replication), writers share no lock for it.
  if (!tapped_.load(std::memory_order_acquire)) return;
  std::shared_lock<std::shared_mutex> lock(tap_mutex_);
  if (tap_ != nullptr) event(tap_);
}

lsm::RegionContext Engine::Context() const {
  lsm::RegionContext context;
  context.volume = volume_.get();
  context.sync_group = const_cast<io::SyncGroup*>(&sync_group_);
  context.sync = options_.sync;
  context.log_options = options_.log;
  context.nodes = const_cast<lsm::NodeCache*>(&nodes_);
  context.records = const_cast<lsm::RecordReader*>(&records_);
  context.compactions = const_cast<ThreadPool*>(&compactions_);
  context.l0_budget = const_cast<lsm::L0Budget*>(&l0_budget_);
  context.on_log_append = [this](uint64_t region_id, log::LogKind kind,
                                 const log::AppendedBytes& appended) {
    Tap([&](lsm::ReplicationTap* tap) {
      tap->OnLogAppend(region_id, kind, appended);
    });
  };
  context.on_index_segment = [this](uint64_t region_id, size_t level,
                                    uint64_t segment, std::string_view bytes) {
    Tap([&](lsm::ReplicationTap* tap) {
      tap->OnIndexSegment(region_id, level, segment, bytes);
    });
  };
  context.on_level_installed = [this](uint64_t region_id, size_t level,
                                      const lsm::LevelDescriptor& descriptor,
                                      std::optional<size_t> emptied,
                                      uint64_t compacted_lsn) {
    Tap([&](lsm::ReplicationTap* tap) {
      tap->OnLevelInstalled(region_id, level, descriptor, emptied,
                            compacted_lsn);
    });
  };
  context.on_log_released =
      [this](uint64_t region_id, log::LogKind kind,
             const std::vector<log::ReleasedSegment>& released) {
        Tap([&](lsm::ReplicationTap* tap) {
          tap->OnLogReleased(region_id, kind, released);
        });
      };
  return context;
}

void Engine::AwaitSettled(std::unique_lock<std::mutex>& lock,
                          std::string_view name) {
  settled_.wait(lock, [&] { return changing_.find(name) == changing_.end(); });
}

std::unique_ptr<lsm::Region> Engine::BeginChange(std::string_view name) {
  // Out of regions_ under mutex_: the flusher and the budget see either
  // object, never a destroyed one.
  std::unique_ptr<lsm::Region> closing;
  const auto open = regions_.find(name);
  if (open != regions_.end()) {
    closing = std::move(open->second);
    regions_.erase(open);
  }
  changing_.emplace(name);
  return closing;
}

void Engine::EndChange(std::string_view name,
                       std::unique_ptr<lsm::Region> opened) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (opened != nullptr) {
      regions_.emplace(std::string(name), std::move(opened));
    }
    changing_.erase(changing_.find(name));
  }
  settled_.notify_all();
}

Status Engine::OpenRegion(std::string_view name, lsm::Region** region) {
  std::unique_lock<std::mutex> lock(mutex_);
  AwaitSettled(lock, name);
  const auto open = regions_.find(name);
  if (open != regions_.end()) {
    *region = open->second.get();
    return Status::Ok();
  }
  const auto id = volume_->CatalogGet(NameKey(name));
  if (!id.has_value()) {
    return Status::NotFound("no region named '" + std::string(name) + "'");
  }
  if (id->size() != 8) {
    return Status::Corruption("malformed catalog entry for region " +
                              std::string(name));
  }
  BeginChange(name);  // not open: nothing to take out
  lock.unlock();
  std::unique_ptr<lsm::Region> opened;
  const Status status = lsm::Region::Open(Context(), std::string(name),
                                          coding::DecodeFixed64(id->data()),
                                          options_.region, &opened);
  *region = opened.get();
  EndChange(name, std::move(opened));
  return status;
}

Status Engine::CreateRegion(std::string_view name, lsm::Region** region) {
  if (name.empty() || name.size() > kRegionNameBytesMax) {
    return Status::InvalidArgument("region names are 1 to 255 bytes");
  }
  std::unique_lock<std::mutex> lock(mutex_);
  AwaitSettled(lock, name);
  if (volume_->CatalogGet(NameKey(name)).has_value()) {
    return Status::InvalidArgument("region '" + std::string(name) +
                                   "' already exists");
  }
  const auto next = volume_->CatalogGet(kNextRegionKey);
  const uint64_t id = next ? coding::DecodeFixed64(next->data()) : 1;
  alloc::MetadataBatch batch;
  batch.Put(kNextRegionKey, coding::Fixed64String(id + 1));
  batch.Put(NameKey(name), coding::Fixed64String(id));
  KVS_RETURN_IF_ERROR(volume_->Commit(batch));
  std::unique_ptr<lsm::Region> created;
  KVS_RETURN_IF_ERROR(lsm::Region::Create(Context(), std::string(name), id,
                                          options_.region, &created));
  *region = created.get();
  regions_.emplace(std::string(name), std::move(created));
  return Status::Ok();
}

Status Engine::ReopenRegion(
    std::string_view name,
    const std::function<Status(uint64_t id)>& while_closed,
    lsm::Region** region) {
  *region = nullptr;
  std::unique_lock<std::mutex> lock(mutex_);
  AwaitSettled(lock, name);
  const auto id = volume_->CatalogGet(NameKey(name));
  if (!id.has_value() || id->size() != 8) {
    return Status::NotFound("no region named '" + std::string(name) + "'");
  }
  const uint64_t region_id = coding::DecodeFixed64(id->data());
  std::unique_ptr<lsm::Region> closing = BeginChange(name);
  lock.unlock();
  closing.reset();  // waits for its compaction, syncs its logs
  const Status changed = while_closed(region_id);
  std::unique_ptr<lsm::Region> opened;
  const Status reopened = lsm::Region::Open(
      Context(), std::string(name), region_id, options_.region, &opened);
  *region = opened.get();
  EndChange(name, std::move(opened));
  return changed.ok() ? reopened : changed;
}

Status Engine::DropRegion(std::string_view name) {
  std::unique_lock<std::mutex> lock(mutex_);
  AwaitSettled(lock, name);
  const auto id = volume_->CatalogGet(NameKey(name));
  if (!id.has_value()) {
    return Status::NotFound("no region named '" + std::string(name) + "'");
  }
  std::unique_ptr<lsm::Region> closing = BeginChange(name);
  lock.unlock();
  closing.reset();
  // Everything the region owns is named in the catalog under its prefix;
  // entries whose value is a segment number are its segments.
  const std::string prefix =
      lsm::Region::CatalogPrefix(coding::DecodeFixed64(id->data()));
  // A replica's medium copies are named by its log map and its levels.
  std::set<uint64_t> segments;
  alloc::MetadataBatch batch;
  for (const auto& [key, value] : volume_->CatalogScan(prefix)) {
    const std::string_view kind = std::string_view(key).substr(prefix.size());
    if (kind.substr(0, 4) == "log/" && value.size() == 8) {
      segments.insert(coding::DecodeFixed64(value.data()));
    } else if (kind.substr(0, 7) == "logmap/" && value.size() >= 8) {
      segments.insert(coding::DecodeFixed64(value.data()));
    } else if (kind.substr(0, 6) == "level/" ||
               kind.substr(0, 9) == "draining/") {
      lsm::LevelDescriptor level;
      if (lsm::LevelDescriptor::Decode(value, &level).ok()) {
        for (const uint64_t segment : level.AllSegments()) {
          segments.insert(segment);
        }
      }
    }
    batch.Delete(key);
  }
  for (const uint64_t segment : segments) {
    if (volume_->IsAllocated(segment)) batch.Free(segment);
  }
  batch.Delete(NameKey(name));
  const Status dropped = volume_->Commit(batch);
  EndChange(name, nullptr);
  return dropped;
}

std::optional<uint64_t> Engine::RegionId(std::string_view name) const {
  const auto id = volume_->CatalogGet(NameKey(name));
  if (!id.has_value() || id->size() != 8) return std::nullopt;
  return coding::DecodeFixed64(id->data());
}

std::vector<std::string> Engine::ListRegions() const {
  std::vector<std::string> names;
  for (const auto& [key, value] : volume_->CatalogScan(kNamesPrefix)) {
    names.push_back(key.substr(sizeof(kNamesPrefix) - 1));
  }
  return names;
}

void Engine::MaintenanceLoop() {
  std::unique_lock<std::mutex> lock(maintenance_mutex_);
  while (!stopping_) {
    maintenance_wakeup_.wait_for(
        lock, std::chrono::milliseconds(options_.flush_interval_ms));
    if (stopping_) {
      break;
    }
    lock.unlock();
    if (!options_.sync) {
      std::lock_guard<std::mutex> regions_lock(mutex_);
      for (auto& [name, region] : regions_) {
        // A failure is sticky in the region's logs and reported to writers.
        (void)region->Flush();
      }
    }
    EnforceL0Budget();
    if (options_.adaptive_cache_split) BalanceCaches();
    lock.lock();
  }
}

void Engine::SplitCache(double share) {
  value_share_ = share;
  const double cache =
      static_cast<double>(options_.memory_budget_bytes) * options_.cache_share;
  const auto ghost = static_cast<size_t>(cache / 4);
  const auto values = static_cast<size_t>(cache * share);
  const auto nodes = static_cast<size_t>(cache * (1.0 - share));
  // The shrinking cache gives its memory back before the other takes it.
  if (values < values_.stats().capacity_bytes) {
    values_.SetCapacity(values, ghost);
    nodes_.SetCapacity(nodes, ghost);
  } else {
    nodes_.SetCapacity(nodes, ghost);
    values_.SetCapacity(values, ghost);
  }
}

void Engine::BalanceCaches() {
  const auto now = std::chrono::steady_clock::now();
  if (now - split_checked_ <
      std::chrono::milliseconds(options_.cache_split_interval_ms)) {
    return;
  }
  split_checked_ = now;
  const uint64_t node_hits = nodes_.stats().ghost_hits;
  const uint64_t value_hits = values_.stats().ghost_hits;
  const double next =
      lsm::NextValueShare(value_share_, node_hits - node_ghost_hits_seen_,
                          value_hits - value_ghost_hits_seen_);
  node_ghost_hits_seen_ = node_hits;
  value_ghost_hits_seen_ = value_hits;
  if (next != value_share_) {
    SplitCache(next);
    cache_split_moves_.fetch_add(1, std::memory_order_relaxed);
  }
}

void Engine::EnforceL0Budget() {
  if (!l0_budget_.Exceeded()) {
    return;
  }
  // Writers of a busy region switch their own L0 when the budget is
  // exceeded; this catches idle regions holding memory nobody writes to.
  std::lock_guard<std::mutex> lock(mutex_);
  lsm::Region* largest = nullptr;
  uint64_t largest_bytes = 0;
  for (auto& [name, region] : regions_) {
    const uint64_t active = region->L0MemoryBytes().active;
    if (active > largest_bytes) {
      largest_bytes = active;
      largest = region.get();
    }
  }
  if (largest != nullptr) {
    largest->RequestCompaction();
  }
}

}  // namespace kvs::engine
