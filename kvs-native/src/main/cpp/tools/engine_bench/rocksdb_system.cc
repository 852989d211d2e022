// RocksDB as the JVM benchmark opens it (RocksDbSystem.java,
// BlobDbSystem.java): leveled compaction, no compression, 10-bit Bloom
// filters, an LRU block cache, two write buffers of the L0 size, direct I/O
// for reads, flushes and compactions, the WAL on without per-write sync.
// rocksdb-wal50 keeps the WAL in user space and writes it out every 50 ms
// (KVS's loss window); blobdb adds integrated BlobDB.

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "tools/engine_bench/systems.h"

namespace kvs::bench {
namespace {

constexpr double kBloomBitsPerKey = 10;
constexpr auto kWalFlushInterval = std::chrono::milliseconds(50);
constexpr double kBlobGcAgeCutoff = 0.3;

Status FromRocks(const rocksdb::Status& status, std::string_view context) {
  if (status.ok()) return Status::Ok();
  if (status.IsNotFound()) return Status::NotFound(status.ToString());
  if (status.IsBusy() || status.IsTryAgain()) {
    return Status::Busy(std::string(context) + ": " + status.ToString());
  }
  return Status::IoError(std::string(context) + ": " + status.ToString());
}

class RocksDbSystem final : public BenchSystem {
 public:
  RocksDbSystem(std::unique_ptr<rocksdb::DB> db, bool flush_wal, bool blobs)
      : db_(std::move(db)), blobs_(blobs) {
    if (flush_wal) flusher_ = std::thread([this] { FlushWalEvery50Ms(); });
  }

  ~RocksDbSystem() override {
    if (flusher_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
      }
      stopped_.notify_all();
      flusher_.join();
      db_->FlushWAL(/*sync=*/false);
    }
    db_->Close();
  }

  Status Put(std::string_view key, std::string_view value) override {
    return FromRocks(
        db_->Put(write_options_, rocksdb::Slice(key.data(), key.size()),
                 rocksdb::Slice(value.data(), value.size())),
        "rocksdb put");
  }

  Status Get(std::string_view key, std::string* value) override {
    return FromRocks(
        db_->Get(read_options_, rocksdb::Slice(key.data(), key.size()), value),
        "rocksdb get");
  }

  Status Scan(std::string_view start, size_t count, uint64_t* pairs,
              uint64_t* bytes) override {
    std::unique_ptr<rocksdb::Iterator> iterator(
        db_->NewIterator(read_options_));
    iterator->Seek(rocksdb::Slice(start.data(), start.size()));
    for (size_t read = 0; read < count && iterator->Valid(); ++read) {
      *bytes += iterator->key().size() + iterator->value().size();
      ++*pairs;
      if (read + 1 < count) iterator->Next();
    }
    return FromRocks(iterator->status(), "rocksdb scan");
  }

  std::string StatsJson() override {
    std::string files;
    for (int level = 0; level < 7; ++level) {
      std::string count;
      db_->GetProperty("rocksdb.num-files-at-level" + std::to_string(level),
                       &count);
      if (!count.empty() && count != "0") {
        files +=
            (files.empty() ? "L" : " L") + std::to_string(level) + ":" + count;
      }
    }
    uint64_t sst_bytes = 0;
    db_->GetIntProperty("rocksdb.total-sst-files-size", &sst_bytes);
    std::string json = "\"files_per_level\":\"" + files +
                       "\",\"sst_bytes\":" + std::to_string(sst_bytes);
    if (blobs_) {
      uint64_t blob_bytes = 0;
      db_->GetIntProperty("rocksdb.total-blob-file-size", &blob_bytes);
      json += ",\"blob_bytes\":" + std::to_string(blob_bytes);
    }
    return json;
  }

 private:
  void FlushWalEvery50Ms() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopped_.wait_for(lock, kWalFlushInterval,
                              [this] { return stopping_; })) {
      // A failure shows on the next put, which would fail on it too.
      db_->FlushWAL(/*sync=*/false);
    }
  }

  std::unique_ptr<rocksdb::DB> db_;
  const bool blobs_;
  rocksdb::WriteOptions write_options_;
  rocksdb::ReadOptions read_options_;
  std::thread flusher_;
  std::mutex mutex_;
  std::condition_variable stopped_;
  bool stopping_ = false;
};

}  // namespace

Status OpenRocksDb(std::string_view name, const std::string& directory,
                   const SystemSettings& settings,
                   std::unique_ptr<BenchSystem>* system) {
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = rocksdb::NewLRUCache(settings.cache_bytes);
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(kBloomBitsPerKey));
  table.cache_index_and_filter_blocks = false;
  rocksdb::Options options;
  options.create_if_missing = true;
  options.compaction_style = rocksdb::kCompactionStyleLevel;
  options.compression = rocksdb::kNoCompression;
  options.bottommost_compression = rocksdb::kNoCompression;
  options.write_buffer_size = settings.l0_bytes;
  options.max_write_buffer_number = 2;
  options.max_background_jobs = static_cast<int>(settings.background_threads);
  options.use_direct_reads = true;
  options.use_direct_io_for_flush_and_compaction = true;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  options.info_log_level = rocksdb::WARN_LEVEL;
  options.keep_log_file_num = 2;
  const bool flush_wal = name == "rocksdb-wal50";
  const bool blobs = name == "blobdb";
  options.manual_wal_flush = flush_wal;
  if (blobs) {
    options.enable_blob_files = true;
    options.min_blob_size = settings.blob_min_bytes;
    options.blob_file_size = settings.l0_bytes;
    options.blob_compression_type = rocksdb::kNoCompression;
    options.enable_blob_garbage_collection = true;
    options.blob_garbage_collection_age_cutoff = kBlobGcAgeCutoff;
  }
  rocksdb::DB* db = nullptr;
  KVS_RETURN_IF_ERROR(
      FromRocks(rocksdb::DB::Open(options, directory, &db), "rocksdb open"));
  *system = std::make_unique<RocksDbSystem>(std::unique_ptr<rocksdb::DB>(db),
                                            flush_wal, blobs);
  return Status::Ok();
}

}  // namespace kvs::bench
