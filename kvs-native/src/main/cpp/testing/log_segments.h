// Test helper: the bytes of a value-log segment (log/log_format.h) made by
// hand, as a primary's log writes them and a backup's copies and buffers
// hold them, for tests of what a backup makes of them.

#ifndef KVS_TESTING_LOG_SEGMENTS_H_
#define KVS_TESTING_LOG_SEGMENTS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "log/log_format.h"

namespace kvs::testing {

class LogSegment {
 public:
  LogSegment(log::LogKind kind, uint64_t chain_index, uint64_t nonce,
             uint64_t region_id = 5);

  LogSegment& Put(uint64_t lsn, std::string_view key, std::string_view value);
  LogSegment& Delete(uint64_t lsn, std::string_view key);
  // The end record: the log went on in the next segment.
  LogSegment& End();

  // The header block and the records so far.
  const std::string& bytes() const { return bytes_; }

 private:
  void Append(const log::Record& record);

  const uint64_t nonce_;
  std::string bytes_;
};

}  // namespace kvs::testing

#endif  // KVS_TESTING_LOG_SEGMENTS_H_
