// MediumReader: resolves medium-log pointers during a compaction into the
// last level, reading each medium segment sequentially in windows.
//
// One compaction writes a medium segment's records in key order, and the
// merge visits keys in order, so the pointers into any one segment arrive
// in increasing offsets: a window per segment, refilled forward, reads each
// segment once in large I/Os (Parallax fetches its transient log segments
// "once and incrementally") instead of one 4 KiB read per value. Records
// are checked (nonce-seeded checksum, key) as RecordReader does.
// Not thread-safe: one compaction owns it.

#ifndef KVS_LSM_MEDIUM_READER_H_
#define KVS_LSM_MEDIUM_READER_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "io/aligned_buffer.h"
#include "io/file.h"
#include "util/status.h"

namespace kvs::lsm {

class MediumReader {
 public:
  explicit MediumReader(io::File* file) : file_(file) {}

  Status ReadValue(uint64_t device_offset, uint32_t size, std::string_view key,
                   std::string* value);
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  // 256 KiB: 2 MiB segments are read in 8 I/Os; a compaction over many
  // medium segments holds a window per segment it is reading.
  static constexpr size_t kWindowBytes = 256 * 1024;
  struct Window {
    uint64_t nonce = 0;
    uint64_t start = 0;  // offset in segment of buffer[0]
    size_t length = 0;   // valid bytes
    io::AlignedBuffer buffer;
  };
  Status Load(uint64_t segment, Window* window, uint64_t offset);

  io::File* const file_;
  std::map<uint64_t, Window> windows_;  // by segment
  uint64_t bytes_read_ = 0;
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_MEDIUM_READER_H_
