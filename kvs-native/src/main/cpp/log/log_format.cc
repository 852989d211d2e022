#include "log/log_format.h"

#include <cstdio>
#include <cstring>

#include "util/coding.h"
#include "util/crc32c.h"
#include "util/limits.h"

namespace kvs::log {
namespace {

constexpr char kMagic[8] = {'K', 'V', 'S', 'L', 'O', 'G', '0', '1'};
constexpr size_t kHeaderCrcOffset = 40;

uint32_t SeededCrc(uint64_t nonce, const char* data, size_t size) {
  char seed[8];
  coding::EncodeFixed64(seed, nonce);
  return crc32c::Extend(crc32c::Value(seed, sizeof(seed)), data, size);
}

}  // namespace

const char* LogKindName(LogKind kind) {
  switch (kind) {
    case LogKind::kSmall:
      return "small";
    case LogKind::kLarge:
      return "large";
    case LogKind::kMedium:
      return "medium";
  }
  return "unknown";
}

void EncodeSegmentHeader(const SegmentHeader& header, char* out) {
  std::memset(out, 0, kSegmentHeaderBytes);
  std::memcpy(out, kMagic, sizeof(kMagic));
  coding::EncodeFixed64(out + 8, header.region_id);
  out[16] = static_cast<char>(header.kind);
  coding::EncodeFixed64(out + 24, header.chain_index);
  coding::EncodeFixed64(out + 32, header.nonce);
  coding::EncodeFixed32(out + kHeaderCrcOffset,
                        crc32c::Mask(crc32c::Value(out, kHeaderCrcOffset)));
}

Status DecodeSegmentHeader(std::string_view block, SegmentHeader* header) {
  if (block.size() < kSegmentHeaderBytes ||
      std::memcmp(block.data(), kMagic, sizeof(kMagic)) != 0) {
    return Status::Corruption("log segment header magic missing");
  }
  const char* p = block.data();
  if (crc32c::Unmask(coding::DecodeFixed32(p + kHeaderCrcOffset)) !=
      crc32c::Value(p, kHeaderCrcOffset)) {
    return Status::Corruption("log segment header checksum mismatch");
  }
  const auto kind = static_cast<uint8_t>(p[16]);
  if (kind < 1 || kind > 3) {
    return Status::Corruption("log segment header names unknown log kind " +
                              std::to_string(kind));
  }
  header->region_id = coding::DecodeFixed64(p + 8);
  header->kind = static_cast<LogKind>(kind);
  header->chain_index = coding::DecodeFixed64(p + 24);
  header->nonce = coding::DecodeFixed64(p + 32);
  return Status::Ok();
}

void EncodeRecord(const Record& record, uint64_t nonce, char* out) {
  coding::EncodeFixed64(out + 4, record.lsn);
  coding::EncodeFixed32(out + 12, static_cast<uint32_t>(record.value.size()));
  coding::EncodeFixed16(out + 16, static_cast<uint16_t>(record.key.size()));
  out[18] = static_cast<char>(record.type);
  out[19] =
      static_cast<char>((record.write_id.present() ? kRecordHasWriteId : 0) |
                        (record.continues_batch ? kRecordContinuesBatch : 0));
  // Empty views may have a null data(); memcpy must not see it.
  if (!record.key.empty()) {
    std::memcpy(out + kRecordHeaderBytes, record.key.data(), record.key.size());
  }
  if (!record.value.empty()) {
    std::memcpy(out + kRecordHeaderBytes + record.key.size(),
                record.value.data(), record.value.size());
  }
  if (record.write_id.present()) {
    char* id =
        out + kRecordHeaderBytes + record.key.size() + record.value.size();
    coding::EncodeFixed64(id, record.write_id.client);
    coding::EncodeFixed64(id + 8, record.write_id.sequence);
  }
  const size_t size = record.EncodedSize();
  coding::EncodeFixed32(out, crc32c::Mask(SeededCrc(nonce, out + 4, size - 4)));
}

bool DecodeRecord(std::string_view input, uint64_t nonce, Record* record,
                  size_t* size) {
  if (input.size() < kRecordHeaderBytes) {
    return false;
  }
  const char* p = input.data();
  const uint32_t value_size = coding::DecodeFixed32(p + 12);
  const uint16_t key_size = coding::DecodeFixed16(p + 16);
  const auto type = static_cast<uint8_t>(p[18]);
  const auto flags = static_cast<uint8_t>(p[19]);
  const bool has_id = (flags & kRecordHasWriteId) != 0;
  if (type < 1 || type > 4 || (flags & ~kRecordFlagsKnown) != 0 ||
      (flags != 0 && type != 1 && type != 2) ||
      key_size > limits::key_size_bytes_max ||
      value_size > limits::value_size_bytes_max ||
      kRecordHeaderBytes + key_size + value_size +
              (has_id ? kWriteIdBytes : 0) >
          input.size()) {
    return false;
  }
  const size_t total =
      kRecordHeaderBytes + key_size + value_size + (has_id ? kWriteIdBytes : 0);
  if (crc32c::Unmask(coding::DecodeFixed32(p)) !=
      SeededCrc(nonce, p + 4, total - 4)) {
    return false;
  }
  record->lsn = coding::DecodeFixed64(p + 4);
  record->type = static_cast<RecordType>(type);
  record->key = std::string_view(p + kRecordHeaderBytes, key_size);
  record->value =
      std::string_view(p + kRecordHeaderBytes + key_size, value_size);
  record->write_id = {};
  record->continues_batch = (flags & kRecordContinuesBatch) != 0;
  if (has_id) {
    const char* id = p + kRecordHeaderBytes + key_size + value_size;
    record->write_id = {coding::DecodeFixed64(id),
                        coding::DecodeFixed64(id + 8)};
  }
  *size = total;
  return true;
}

std::string SegmentCatalogKey(std::string_view prefix, uint64_t chain_index) {
  char digits[17];
  std::snprintf(digits, sizeof(digits), "%016llx",
                static_cast<unsigned long long>(chain_index));
  return std::string(prefix) + digits;
}

}  // namespace kvs::log
