// RecordReader: reads a value through a pointer into a value log (large or
// medium), verifying the record's checksum with its segment's nonce and
// that it belongs to the key that pointed at it. A value that fails either
// check is reported as Corruption, never served.
//
// Nonces are read from segment headers once and cached; values, once
// checked, in the engine's ValueCache if it has one (value_cache.h).
// Forget(segment) must be called before a freed log segment is reused.
//
// Thread safety: all methods may be called concurrently.

#ifndef KVS_LSM_RECORD_READER_H_
#define KVS_LSM_RECORD_READER_H_

#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "io/file.h"
#include "lsm/value_cache.h"
#include "util/status.h"

namespace kvs::lsm {

class RecordReader {
 public:
  // `cache`: where checked values are kept and looked up (null: none).
  explicit RecordReader(io::File* file, ValueCache* cache = nullptr)
      : file_(file), cache_(cache) {}

  // Reads the record of `size` bytes at `device_offset` and returns its
  // value, checking it was written for `key`.
  Status ReadValue(uint64_t device_offset, uint32_t size, std::string_view key,
                   std::string* value);

  // One value of a batch.
  struct ValueRead {
    uint64_t device_offset = 0;
    uint32_t size = 0;
    std::string_view key;
    std::string* value = nullptr;
  };
  // Reads every value of `reads` as one batch of concurrent device reads
  // (io::File::ReadMany), with the checks of ReadValue; records at most
  // kCoalesceGapBytes apart are read by one request. The first failure is
  // returned.
  Status ReadValues(std::span<const ValueRead> reads);

  // Keeps the value of a record just written (`size` bytes at
  // `device_offset`, for `key`) in the value cache, if there is one.
  void Remember(uint64_t device_offset, uint32_t size, std::string_view key,
                std::string_view value) {
    if (cache_ != nullptr) cache_->Put(device_offset, size, key, value);
  }
  void Forget(uint64_t segment);

 private:
  // Bounds of one coalesced read: the largest gap read for nothing, and the
  // largest request.
  static constexpr uint64_t kCoalesceGapBytes = 4096;
  static constexpr uint64_t kCoalescedReadBytesMax = 256 << 10;

  Status Nonce(uint64_t segment, uint64_t* nonce);
  // The device range a read of the record takes: only the blocks that hold
  // it (File::read_alignment_bytes), [first, end).
  std::pair<uint64_t, uint64_t> BlocksOf(uint64_t device_offset,
                                         uint32_t size) const;
  // Checks a pointer's bounds before it is read.
  static Status CheckPointer(uint64_t device_offset, uint32_t size);
  // Decodes the record in `bytes` (the pointer's exact range).
  static Status DecodeValue(std::string_view bytes, uint64_t nonce,
                            uint64_t device_offset, std::string_view key,
                            std::string* value);

  io::File* const file_;
  ValueCache* const cache_;
  std::mutex mutex_;
  std::unordered_map<uint64_t, uint64_t> nonces_;
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_RECORD_READER_H_
