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
  void Forget(uint64_t segment);

 private:
  Status Nonce(uint64_t segment, uint64_t* nonce);

  io::File* const file_;
  std::mutex mutex_;
  std::unordered_map<uint64_t, uint64_t> nonces_;
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_RECORD_READER_H_
