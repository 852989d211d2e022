// The KVS engine as the JVM benchmark opens it (KvsSystem.java): one volume,
// one region, sync off (durable within the flusher's 50 ms), direct I/O,
// size classes cut so that the mixes' 1023 B pairs are large.

#include <atomic>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "lsm/region.h"
#include "lsm/region_iterator.h"
#include "tools/engine_bench/systems.h"

namespace kvs::bench {
namespace {

// A write that keeps failing with BUSY (a stall that outlasted the engine's
// stall timeout) is tried again, as a client would, this many times.
constexpr int kBusyAttemptsMax = 30;
// What one ReadPairs call may gather (the JVM binding's batch).
constexpr size_t kScanBatchBytes = 4u << 20;

class KvsSystem final : public BenchSystem {
 public:
  KvsSystem(std::unique_ptr<engine::Engine> engine, lsm::Region* region)
      : engine_(std::move(engine)), region_(region) {}

  Status Put(std::string_view key, std::string_view value) override {
    for (int attempt = 1;; ++attempt) {
      Status status = region_->Put(key, value);
      if (!status.IsBusy() || attempt >= kBusyAttemptsMax) return status;
      busy_retries_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  Status Get(std::string_view key, std::string* value) override {
    return region_->Get(key, value);
  }

  Status Scan(std::string_view start, size_t count, uint64_t* pairs,
              uint64_t* bytes) override {
    auto iterator = region_->NewIterator(std::nullopt);
    iterator->Seek(start);
    std::vector<lsm::RegionIterator::Pair> batch;
    while (batch.size() < count && iterator->Valid()) {
      KVS_RETURN_IF_ERROR(
          iterator->ReadPairs(count - batch.size(), kScanBatchBytes, &batch));
    }
    KVS_RETURN_IF_ERROR(iterator->status());
    for (const auto& pair : batch) {
      *bytes += pair.key.size() + pair.value.size();
    }
    *pairs += batch.size();
    return Status::Ok();
  }

  std::string StatsJson() override {
    const lsm::RegionStats stats = region_->stats();
    return "\"compactions\":" + std::to_string(stats.compactions) +
           ",\"compaction_bytes_written\":" +
           std::to_string(stats.compaction_bytes_written) +
           ",\"l0_merges\":" + std::to_string(stats.l0_merges) +
           ",\"l0s_merged\":" + std::to_string(stats.l0s_merged) +
           ",\"device_levels\":" + std::to_string(stats.level_count) +
           ",\"level_kv_bytes\":" + std::to_string(stats.level_kv_bytes) +
           ",\"write_stalls\":" + std::to_string(stats.stalls) +
           ",\"write_stall_us\":" + std::to_string(stats.stall_micros) +
           ",\"budget_stalls\":" + std::to_string(stats.budget_stalls) +
           ",\"busy_retries\":" + std::to_string(busy_retries_.load()) +
           ",\"large_log_bytes\":" + std::to_string(stats.large_log_bytes) +
           ",\"large_garbage_bytes\":" +
           std::to_string(stats.large_garbage_bytes) +
           ",\"value_bytes_read\":" + std::to_string(stats.value_bytes_read) +
           ",\"gc_relocated_bytes\":" +
           std::to_string(stats.gc_relocated_bytes);
  }

 private:
  std::unique_ptr<engine::Engine> engine_;
  lsm::Region* const region_;
  std::atomic<uint64_t> busy_retries_{0};
};

}  // namespace

Status OpenKvs(const std::string& directory, const SystemSettings& settings,
               std::unique_ptr<BenchSystem>* system) {
  engine::EngineOptions options;
  options.sync = false;
  options.direct_io = true;
  options.region.l0_size_bytes = settings.l0_bytes;
  options.region.placement.small_kv_bytes_max = 119;
  options.region.placement.medium_kv_bytes_max = 1022;
  options.memory_budget_bytes = 2 * settings.cache_bytes;
  if (settings.value_cache_percent.has_value()) {
    options.value_cache_share = *settings.value_cache_percent / 100.0;
    options.adaptive_cache_split = false;  // a fixed split, to compare
  }
  if (settings.stale_percent.has_value()) {
    options.region.stale_fraction_max = *settings.stale_percent / 100.0;
  }
  std::unique_ptr<engine::Engine> engine;
  KVS_RETURN_IF_ERROR(engine::Engine::Open(directory + "/volume", options,
                                           /*create_if_missing=*/true,
                                           &engine));
  lsm::Region* region = nullptr;
  KVS_RETURN_IF_ERROR(engine->CreateRegion("bench", &region));
  *system = std::make_unique<KvsSystem>(std::move(engine), region);
  return Status::Ok();
}

Status OpenSystem(std::string_view name, const std::string& directory,
                  const SystemSettings& settings,
                  std::unique_ptr<BenchSystem>* system) {
  if (name == "kvs") return OpenKvs(directory, settings, system);
  if (name == "rocksdb" || name == "rocksdb-wal50" || name == "blobdb") {
    return OpenRocksDb(name, directory, settings, system);
  }
  return Status::InvalidArgument("unknown system '" + std::string(name) +
                                 "'; known: kvs, rocksdb, rocksdb-wal50, "
                                 "blobdb");
}

}  // namespace kvs::bench
