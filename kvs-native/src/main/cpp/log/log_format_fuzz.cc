// libFuzzer target for the value-log decoders: DecodeSegmentHeader (the 4 KiB
// block that opens every log segment) and DecodeRecord (each record after
// it). Both read device bytes that may be torn, stale or damaged.
//
// Input: an 8-byte nonce (the segment's, which seeds record checksums), then
// the bytes to decode. They are tried as given and once more resealed (the
// header's and the record's checksums made right through the encoders), so
// that the fuzzer reaches the field checks behind the checksums.
//
// Checked: no crash or sanitizer report on any input; a decoded record lies
// inside the input, and encoding it again with the same nonce gives back
// exactly the input's bytes (the record format has no slack); a decoded
// header encodes to a block that decodes to the same header and agrees with
// the input on every field byte.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "log/log_format.h"
#include "util/check.h"
#include "util/coding.h"

namespace {

namespace log = kvs::log;

constexpr size_t kNonceBytes = 8;

void CheckRecord(std::string_view bytes, uint64_t nonce) {
  log::Record record;
  size_t size = 0;
  if (!log::DecodeRecord(bytes, nonce, &record, &size)) {
    return;
  }
  KVS_CHECK(size == record.EncodedSize() && size <= bytes.size());
  KVS_CHECK(record.key.data() == bytes.data() + log::kRecordHeaderBytes);
  KVS_CHECK(record.value.data() == record.key.data() + record.key.size());
  std::string encoded(size, '\0');
  log::EncodeRecord(record, nonce, encoded.data());
  KVS_CHECK_MSG(encoded == bytes.substr(0, size),
                "re-encoding a record changed its bytes");
}

void CheckHeader(std::string_view block) {
  log::SegmentHeader header;
  if (!log::DecodeSegmentHeader(block, &header).ok()) {
    return;
  }
  std::string encoded(log::kSegmentHeaderBytes, '\0');
  log::EncodeSegmentHeader(header, encoded.data());
  log::SegmentHeader again;
  KVS_CHECK_MSG(log::DecodeSegmentHeader(encoded, &again).ok(),
                "an encoded header does not decode");
  KVS_CHECK(again.region_id == header.region_id && again.kind == header.kind &&
            again.chain_index == header.chain_index &&
            again.nonce == header.nonce);
  // Magic, region and kind; chain index, nonce and checksum. Bytes 17..23
  // are zero in the format, but the decoder does not insist.
  KVS_CHECK(encoded.compare(0, 17, block, 0, 17) == 0);
  KVS_CHECK(encoded.compare(24, 20, block, 24, 20) == 0);
}

// The record at the front of `bytes` with its checksum made right. Its
// fields are taken as they are, even when out of range; only byte 19, which
// the encoder always zeroes, may change.
std::string ResealRecord(std::string_view bytes, uint64_t nonce) {
  std::string out(bytes);
  if (bytes.size() < log::kRecordHeaderBytes) {
    return out;
  }
  const char* p = bytes.data();
  const size_t key_size = kvs::coding::DecodeFixed16(p + 16);
  const size_t value_size = kvs::coding::DecodeFixed32(p + 12);
  if (log::kRecordHeaderBytes + key_size + value_size > bytes.size()) {
    return out;
  }
  log::Record record;
  record.lsn = kvs::coding::DecodeFixed64(p + 4);
  record.type = static_cast<log::RecordType>(p[18]);
  record.key = bytes.substr(log::kRecordHeaderBytes, key_size);
  record.value = bytes.substr(log::kRecordHeaderBytes + key_size, value_size);
  log::EncodeRecord(record, nonce, out.data());
  return out;
}

std::string ResealHeader(std::string_view block) {
  std::string out(block);
  if (block.size() < log::kSegmentHeaderBytes) {
    return out;
  }
  const char* p = block.data();
  log::SegmentHeader header;
  header.region_id = kvs::coding::DecodeFixed64(p + 8);
  header.kind = static_cast<log::LogKind>(p[16]);
  header.chain_index = kvs::coding::DecodeFixed64(p + 24);
  header.nonce = kvs::coding::DecodeFixed64(p + 32);
  // The encoder writes a whole block with its own magic; keep the input's
  // magic so that a damaged one stays damaged.
  log::EncodeSegmentHeader(header, out.data());
  out.replace(0, 8, block.substr(0, 8));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < kNonceBytes) {
    return 0;
  }
  const auto* chars = reinterpret_cast<const char*>(data);
  const uint64_t nonce = kvs::coding::DecodeFixed64(chars);
  const std::string_view bytes(chars + kNonceBytes, size - kNonceBytes);
  CheckRecord(bytes, nonce);
  CheckRecord(ResealRecord(bytes, nonce), nonce);
  CheckHeader(bytes);
  CheckHeader(ResealHeader(bytes));
  return 0;
}
