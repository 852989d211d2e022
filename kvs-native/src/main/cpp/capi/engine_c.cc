// The engine part of the C ABI (include/kvs/kvs.h): adapts C types to
// engine::Engine and lsm::Region.

#include <algorithm>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "capi/engine_handle.h"
#include "capi/last_error.h"
#include "engine/engine.h"
#include "kvs/kvs.h"
#include "replication/contents_digest.h"
#include "service/conditional_write.h"
#include "wire/messages.h"

namespace {

using kvs::Status;
using kvs::capi::Report;

kvs::engine::EngineOptions ToOptions(const kvs_engine_options& c) {
  kvs::engine::EngineOptions options;
  options.sync = c.sync != 0;
  options.flush_interval_ms = c.flush_interval_ms;
  options.direct_io = c.direct_io != 0;
  options.region.l0_size_bytes = c.l0_size_bytes;
  options.region.growth_factor = c.growth_factor;
  options.region.placement.small_kv_bytes_max = c.small_kv_bytes_max;
  options.region.placement.medium_kv_bytes_max = c.medium_kv_bytes_max;
  options.memory_budget_bytes = c.memory_budget_bytes;
  return options;
}

Status Validate(const kvs_engine_options& c) {
  if (c.flush_interval_ms == 0 || c.flush_interval_ms > 60'000) {
    return Status::InvalidArgument("flush interval must be 1..60000 ms");
  }
  if (c.l0_size_bytes < (1u << 20)) {
    return Status::InvalidArgument("L0 size must be at least 1 MiB");
  }
  if (c.growth_factor < 2 || c.growth_factor > 64) {
    return Status::InvalidArgument("growth factor must be 2..64");
  }
  if (c.memory_budget_bytes < (8u << 20)) {
    return Status::InvalidArgument("memory budget must be at least 8 MiB");
  }
  if (c.small_kv_bytes_max > c.medium_kv_bytes_max) {
    return Status::InvalidArgument(
        "small KV threshold must not exceed the medium threshold");
  }
  return Status::Ok();
}

kvs_region* HandleFor(kvs::lsm::Region* region) {
  return reinterpret_cast<kvs_region*>(region);
}
kvs::lsm::Region* RegionOf(kvs_region* handle) {
  return reinterpret_cast<kvs::lsm::Region*>(handle);
}
kvs::lsm::RegionIterator* IteratorOf(kvs_iterator* handle) {
  return reinterpret_cast<kvs::lsm::RegionIterator*>(handle);
}
const kvs::lsm::RegionIterator* IteratorOf(const kvs_iterator* handle) {
  return reinterpret_cast<const kvs::lsm::RegionIterator*>(handle);
}

// Writes through this ABI are serialised per region and key stripe, so
// that nothing comes between a conditional write's read and its write.
std::mutex& WriteStripe(const kvs_region* region, std::string_view key) {
  static std::mutex stripes[256];
  const size_t hash = std::hash<std::string_view>{}(key) ^
                      (reinterpret_cast<uintptr_t>(region) >> 4);
  return stripes[hash % 256];
}

// A conditional write of the C ABI: validated as the wire protocol's, then
// decided under its key's stripe.
kvs_status Conditional(kvs_region* region, const kvs::wire::Request& request,
                       kvs::service::ConditionalOutcome* outcome) {
  const Status valid = kvs::wire::ValidateRequest(request);
  if (!valid.ok()) return Report(valid);
  std::lock_guard<std::mutex> lock(WriteStripe(region, request.key));
  kvs::replication::Record record;
  bool wrote = false;
  bool needs_device = false;
  return Report(kvs::service::DecideConditional(
      request, RegionOf(region), /*refuse_device=*/false, outcome, &record,
      &wrote, &needs_device));
}

}  // namespace

extern "C" {

void kvs_engine_options_init(kvs_engine_options* options) {
  const kvs::engine::EngineOptions defaults;
  options->sync = defaults.sync ? 1 : 0;
  options->flush_interval_ms = defaults.flush_interval_ms;
  options->direct_io = defaults.direct_io ? 1 : 0;
  options->l0_size_bytes = defaults.region.l0_size_bytes;
  options->growth_factor = defaults.region.growth_factor;
  options->small_kv_bytes_max =
      static_cast<uint32_t>(defaults.region.placement.small_kv_bytes_max);
  options->medium_kv_bytes_max =
      static_cast<uint32_t>(defaults.region.placement.medium_kv_bytes_max);
  options->memory_budget_bytes = defaults.memory_budget_bytes;
}

kvs_status kvs_engine_open(const char* path, const kvs_engine_options* options,
                           int create_if_missing, kvs_engine** engine) {
  kvs_engine_options effective;
  if (options == nullptr) {
    kvs_engine_options_init(&effective);
  } else {
    effective = *options;
  }
  Status status = Validate(effective);
  if (!status.ok()) {
    return Report(status);
  }
  auto handle = std::make_unique<kvs_engine>();
  status = kvs::engine::Engine::Open(path, ToOptions(effective),
                                     create_if_missing != 0, &handle->engine);
  if (!status.ok()) {
    return Report(status);
  }
  *engine = handle.release();
  return KVS_OK;
}

void kvs_engine_close(kvs_engine* engine) { delete engine; }

void kvs_engine_get_stats(const kvs_engine* engine, kvs_engine_stats* stats) {
  const kvs::engine::EngineStats s = engine->engine->Stats();
  *stats = {s.cache_hits,           s.cache_misses, s.cache_bytes,
            s.cache_capacity_bytes, s.l0_bytes,     s.l0_budget_bytes};
}

kvs_status kvs_region_create(kvs_engine* engine, const char* name,
                             size_t name_size, kvs_region** region) {
  kvs::lsm::Region* created = nullptr;
  const Status status =
      engine->engine->CreateRegion(std::string_view(name, name_size), &created);
  if (!status.ok()) {
    return Report(status);
  }
  *region = HandleFor(created);
  return KVS_OK;
}

kvs_status kvs_region_open(kvs_engine* engine, const char* name,
                           size_t name_size, kvs_region** region) {
  kvs::lsm::Region* opened = nullptr;
  const Status status =
      engine->engine->OpenRegion(std::string_view(name, name_size), &opened);
  if (!status.ok()) {
    return Report(status);
  }
  *region = HandleFor(opened);
  return KVS_OK;
}

kvs_status kvs_region_drop(kvs_engine* engine, const char* name,
                           size_t name_size) {
  return Report(engine->engine->DropRegion(std::string_view(name, name_size)));
}

kvs_status kvs_region_split(kvs_engine* engine, const char* name,
                            size_t name_size, const void* split_key,
                            size_t split_key_size, const char* lower,
                            size_t lower_size, const char* upper,
                            size_t upper_size) {
  kvs::lsm::Region* lower_region = nullptr;
  kvs::lsm::Region* upper_region = nullptr;
  return Report(engine->engine->SplitRegion(
      std::string_view(name, name_size),
      std::string_view(static_cast<const char*>(split_key), split_key_size),
      std::string_view(lower, lower_size), std::string_view(upper, upper_size),
      &lower_region, &upper_region));
}

kvs_status kvs_put(kvs_region* region, const void* key, size_t key_size,
                   const void* value, size_t value_size) {
  const std::string_view k(static_cast<const char*>(key), key_size);
  std::lock_guard<std::mutex> lock(WriteStripe(region, k));
  return Report(RegionOf(region)->Put(
      k, std::string_view(static_cast<const char*>(value), value_size)));
}

kvs_status kvs_delete(kvs_region* region, const void* key, size_t key_size) {
  const std::string_view k(static_cast<const char*>(key), key_size);
  std::lock_guard<std::mutex> lock(WriteStripe(region, k));
  return Report(RegionOf(region)->Delete(k));
}

kvs_status kvs_compare_and_set(kvs_region* region, const void* key,
                               size_t key_size, const void* expected,
                               size_t expected_size, const void* value,
                               size_t value_size, int* applied,
                               kvs_value_sink sink, void* sink_context) {
  kvs::wire::Request request;
  request.opcode = kvs::wire::Opcode::kCompareAndSet;
  request.key = std::string_view(static_cast<const char*>(key), key_size);
  if (expected != nullptr) {
    request.expected =
        std::string_view(static_cast<const char*>(expected), expected_size);
  }
  if (value != nullptr) {
    request.replacement =
        std::string_view(static_cast<const char*>(value), value_size);
  }
  kvs::service::ConditionalOutcome outcome;
  const kvs_status status = Conditional(region, request, &outcome);
  if (status != KVS_OK) return status;
  *applied = outcome.applied ? 1 : 0;
  if (!outcome.applied && outcome.current && sink != nullptr) {
    sink(sink_context, outcome.current->data(), outcome.current->size());
  }
  return KVS_OK;
}

kvs_status kvs_increment(kvs_region* region, const void* key, size_t key_size,
                         int64_t delta, int64_t* counter) {
  kvs::wire::Request request;
  request.opcode = kvs::wire::Opcode::kIncrement;
  request.key = std::string_view(static_cast<const char*>(key), key_size);
  request.delta = delta;
  kvs::service::ConditionalOutcome outcome;
  const kvs_status status = Conditional(region, request, &outcome);
  if (status == KVS_OK) *counter = outcome.counter;
  return status;
}

kvs_status kvs_get(kvs_region* region, const void* key, size_t key_size,
                   kvs_value_sink sink, void* sink_context) {
  std::string value;
  const Status status = RegionOf(region)->Get(
      std::string_view(static_cast<const char*>(key), key_size), &value);
  if (!status.ok()) {
    return Report(status);
  }
  sink(sink_context, value.data(), value.size());
  return KVS_OK;
}

kvs_status kvs_region_sync(kvs_region* region) {
  return Report(RegionOf(region)->Sync());
}

kvs_status kvs_region_merge_ahead(kvs_region* region, uint64_t wait_ms,
                                  int* merged) {
  *merged = RegionOf(region)->MergeAhead(wait_ms) ? 1 : 0;
  return KVS_OK;
}

kvs_status kvs_region_split_key(kvs_region* region, kvs_value_sink sink,
                                void* sink_context) {
  std::string key;
  bool found = false;
  const Status status = RegionOf(region)->SplitKey(&key, &found);
  if (!status.ok()) return Report(status);
  if (!found) return KVS_NOT_FOUND;
  sink(sink_context, key.data(), key.size());
  return KVS_OK;
}

kvs_status kvs_region_load_split_key(kvs_region* region, kvs_value_sink sink,
                                     void* sink_context) {
  std::string key;
  if (!RegionOf(region)->LoadSplitKey(&key)) return KVS_NOT_FOUND;
  sink(sink_context, key.data(), key.size());
  return KVS_OK;
}

void kvs_region_get_stats(kvs_region* region, kvs_region_stats* stats) {
  static_assert(KVS_STATS_LEVELS == kvs::lsm::kStatsLevels);
  const kvs::lsm::RegionStats s = RegionOf(region)->stats();
  *stats = {s.puts,
            s.deletes,
            s.gets,
            s.l0_bytes,
            s.l0_entries,
            s.stalls,
            s.stall_micros,
            s.small_log_bytes,
            s.large_log_bytes,
            s.last_lsn,
            s.compactions,
            s.compaction_bytes_written,
            s.level_count,
            s.level_kv_bytes,
            s.large_garbage_bytes,
            s.gc_relocated_bytes,
            s.gc_freed_segments,
            s.large_log_segments,
            s.compaction_bytes_read,
            s.medium_log_bytes,
            s.value_bytes_read,
            s.gc_bytes_read,
            {},
            {},
            s.recovery.replayed_writes,
            s.recovery.dropped_writes,
            s.recovery.cut_lsn,
            s.recovery.micros,
            s.compaction_micros,
            s.shared_segments,
            s.l0_kv_bytes};
  std::copy(std::begin(s.level_bytes_read), std::end(s.level_bytes_read),
            stats->level_bytes_read);
  std::copy(std::begin(s.level_bytes_written), std::end(s.level_bytes_written),
            stats->level_bytes_written);
}

size_t kvs_region_stopped_by(kvs_region* region, char* message,
                             size_t capacity) {
  const Status stopped = RegionOf(region)->StoppedBy();
  if (stopped.ok()) return 0;
  const std::string text = stopped.ToString();
  std::memcpy(message, text.data(), std::min(capacity, text.size()));
  return text.size();
}

kvs_status kvs_region_contents_digest(kvs_region* region,
                                      kvs_contents_digest* digest) {
  kvs::replication::ContentsDigest d;
  const Status status = kvs::replication::DigestRegion(*RegionOf(region), &d);
  if (!status.ok()) return Report(status);
  *digest = {d.digest,      d.pairs,   d.level_pairs, d.levels,
             d.past_levels, d.dropped, d.last_lsn,    d.compacted_lsn};
  return KVS_OK;
}

kvs_status kvs_iterator_create(kvs_region* region, const void* upper_bound,
                               size_t upper_bound_size,
                               kvs_iterator** iterator) {
  std::optional<std::string> bound;
  if (upper_bound != nullptr) {
    bound.emplace(static_cast<const char*>(upper_bound), upper_bound_size);
  }
  *iterator = reinterpret_cast<kvs_iterator*>(
      RegionOf(region)->NewIterator(std::move(bound)).release());
  return KVS_OK;
}

void kvs_iterator_destroy(kvs_iterator* iterator) {
  delete IteratorOf(iterator);
}

void kvs_iterator_seek_to_first(kvs_iterator* iterator) {
  IteratorOf(iterator)->SeekToFirst();
}

void kvs_iterator_seek(kvs_iterator* iterator, const void* key,
                       size_t key_size) {
  IteratorOf(iterator)->Seek(
      std::string_view(static_cast<const char*>(key), key_size));
}

int kvs_iterator_valid(const kvs_iterator* iterator) {
  return IteratorOf(iterator)->Valid() ? 1 : 0;
}

void kvs_iterator_next(kvs_iterator* iterator) { IteratorOf(iterator)->Next(); }

void kvs_iterator_key(const kvs_iterator* iterator, const void** key,
                      size_t* key_size) {
  const std::string_view current = IteratorOf(iterator)->key();
  *key = current.data();
  *key_size = current.size();
}

kvs_status kvs_iterator_value(const kvs_iterator* iterator, kvs_value_sink sink,
                              void* sink_context) {
  std::string value;
  const Status status = IteratorOf(iterator)->value(&value);
  if (!status.ok()) {
    return Report(status);
  }
  sink(sink_context, value.data(), value.size());
  return KVS_OK;
}

kvs_status kvs_iterator_read_pairs(kvs_iterator* iterator, size_t limit,
                                   size_t max_bytes, kvs_pair_sink sink,
                                   void* sink_context) {
  std::vector<kvs::lsm::RegionIterator::Pair> pairs;
  const Status status =
      IteratorOf(iterator)->ReadPairs(limit, max_bytes, &pairs);
  if (!status.ok()) {
    return Report(status);
  }
  for (const auto& pair : pairs) {
    sink(sink_context, pair.key.data(), pair.key.size(), pair.value.data(),
         pair.value.size());
  }
  return KVS_OK;
}

kvs_status kvs_iterator_status(const kvs_iterator* iterator) {
  return Report(IteratorOf(iterator)->status());
}

}  // extern "C"
