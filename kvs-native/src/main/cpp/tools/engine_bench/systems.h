// The systems the native engine benchmark compares, behind one interface:
// the KVS engine through its C++ API, and RocksDB (plain, with its WAL
// flushed every 50 ms, with integrated BlobDB) through Debian's
// librocksdb -- configured as the JVM benchmark configures them
// (kvs-bench io.kvs.bench.engine.KvsSystem, RocksDbSystem, BlobDbSystem),
// with no JNI crossing on either side.

#ifndef KVS_TOOLS_ENGINE_BENCH_SYSTEMS_H_
#define KVS_TOOLS_ENGINE_BENCH_SYSTEMS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "util/status.h"

namespace kvs::bench {

struct SystemSettings {
  // Every system's cache (KVS: its node cache); the memory budget of the
  // KVS engine is twice it, half for its L0s.
  uint64_t cache_bytes = 128ull << 20;
  // KVS's L0 size; RocksDB's write buffer size (at most two).
  uint64_t l0_bytes = 32ull << 20;
  unsigned background_threads = 2;
  // BlobDB's min_blob_size.
  uint64_t blob_min_bytes = 64;
  // KVS: a fixed value cache percentage of the cache (the node cache has the
  // rest); empty: the engine's default, an adaptive split.
  std::optional<unsigned> value_cache_percent;
  // KVS: RegionOptions::stale_fraction_max in percent; empty: the default.
  std::optional<unsigned> stale_percent;
};

// Thread-safe: client threads call every method but Stats concurrently.
class BenchSystem {
 public:
  virtual ~BenchSystem() = default;
  virtual Status Put(std::string_view key, std::string_view value) = 0;
  // NotFound if the key has no value.
  virtual Status Get(std::string_view key, std::string* value) = 0;
  // Reads up to `count` pairs in key order from the first key >= `start`;
  // adds how many it read and their key + value bytes.
  virtual Status Scan(std::string_view start, size_t count, uint64_t* pairs,
                      uint64_t* bytes) = 0;
  // The system's own counters, as the members of a JSON object (no braces).
  virtual std::string StatsJson() = 0;
};

// kvs, rocksdb, rocksdb-wal50 or blobdb, on the empty directory
// `directory`. InvalidArgument for another name.
Status OpenSystem(std::string_view name, const std::string& directory,
                  const SystemSettings& settings,
                  std::unique_ptr<BenchSystem>* system);

Status OpenKvs(const std::string& directory, const SystemSettings& settings,
               std::unique_ptr<BenchSystem>* system);
// `name`: rocksdb, rocksdb-wal50 or blobdb.
Status OpenRocksDb(std::string_view name, const std::string& directory,
                   const SystemSettings& settings,
                   std::unique_ptr<BenchSystem>* system);

}  // namespace kvs::bench

#endif  // KVS_TOOLS_ENGINE_BENCH_SYSTEMS_H_
