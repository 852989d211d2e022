#include "testing/log_segments.h"

namespace kvs::testing {

LogSegment::LogSegment(log::LogKind kind, uint64_t chain_index, uint64_t nonce,
                       uint64_t region_id)
    : nonce_(nonce), bytes_(log::kSegmentHeaderBytes, '\0') {
  log::SegmentHeader header;
  header.region_id = region_id;
  header.kind = kind;
  header.chain_index = chain_index;
  header.nonce = nonce;
  log::EncodeSegmentHeader(header, bytes_.data());
}

LogSegment& LogSegment::Put(uint64_t lsn, std::string_view key,
                            std::string_view value) {
  Append({lsn, log::RecordType::kPut, key, value, {}});
  return *this;
}

LogSegment& LogSegment::Delete(uint64_t lsn, std::string_view key) {
  Append({lsn, log::RecordType::kDelete, key, {}, {}});
  return *this;
}

LogSegment& LogSegment::End() {
  Append({0, log::RecordType::kSegmentEnd, {}, {}, {}});
  return *this;
}

void LogSegment::Append(const log::Record& record) {
  const size_t at = bytes_.size();
  bytes_.resize(at + record.EncodedSize());
  log::EncodeRecord(record, nonce_, bytes_.data() + at);
}

}  // namespace kvs::testing
