// RecordReader: reads a value through a pointer into a value log (large or
// medium), verifying the record's checksum with its segment's nonce and
// that it belongs to the key that pointed at it. A value that fails either
// check is reported as Corruption, never served.
//
// Nonces are read from segment headers once and cached; Forget(segment)
// must be called before a freed log segment is reused.
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

#include "io/file.h"
#include "util/status.h"

namespace kvs::lsm {

class RecordReader {
 public:
  explicit RecordReader(io::File* file) : file_(file) {}

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
  // (io::File::ReadMany), with the checks of ReadValue; the first failure
  // is returned.
  Status ReadValues(std::span<const ValueRead> reads);

  void Forget(uint64_t segment);

 private:
  Status Nonce(uint64_t segment, uint64_t* nonce);
  // Checks a pointer's bounds before it is read.
  static Status CheckPointer(uint64_t device_offset, uint32_t size);
  // Decodes the record in `bytes` (the pointer's exact range).
  static Status DecodeValue(std::string_view bytes, uint64_t nonce,
                            uint64_t device_offset, std::string_view key,
                            std::string* value);

  io::File* const file_;
  std::mutex mutex_;
  std::unordered_map<uint64_t, uint64_t> nonces_;
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_RECORD_READER_H_
