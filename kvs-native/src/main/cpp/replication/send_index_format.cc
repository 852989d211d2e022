#include "replication/send_index_format.h"

#include "replication/replication_format.h"
#include "util/coding.h"
#include "util/limits.h"

namespace kvs::replication {
namespace {

constexpr size_t kHeadBytes = 24;
constexpr size_t kFlushTailBytes = kHeadBytes + 32;
constexpr size_t kShipSegmentBytes = kHeadBytes + 16;
constexpr size_t kInstallHeadBytes = kHeadBytes + 24;
constexpr size_t kTrimHeadBytes = kHeadBytes + 8;
constexpr size_t kTrimEntryBytes = 24;
constexpr uint32_t kNoLevel = 0xffffffffu;

bool ValidKind(uint8_t kind) {
  return kind >= static_cast<uint8_t>(log::LogKind::kSmall) &&
         kind <= static_cast<uint8_t>(log::LogKind::kMedium);
}

bool Zero(const char* bytes, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    if (bytes[i] != 0) return false;
  }
  return true;
}

Status Malformed(const std::string& what) {
  return Status::InvalidArgument("malformed Send-Index message: " + what);
}

}  // namespace

bool IsIndexControl(std::string_view message) {
  if (message.size() < kHeadBytes || !IsControl(message)) return false;
  const auto type = static_cast<uint8_t>(message[4]);
  return type >= static_cast<uint8_t>(IndexControlType::kFlushTail) &&
         type <= static_cast<uint8_t>(IndexControlType::kTrim);
}

void EncodeIndexControl(const IndexControl& control, std::string* out) {
  EncodeControlHead(static_cast<uint8_t>(control.type), control.region_id,
                    control.epoch, out);
  switch (control.type) {
    case IndexControlType::kFlushTail:
      out->push_back(static_cast<char>(control.kind));
      out->push_back(control.sealed ? 1 : 0);
      out->push_back(control.starts ? 1 : 0);
      out->push_back('\0');
      coding::PutFixed32(out, control.bytes);
      coding::PutFixed64(out, control.chain_index);
      coding::PutFixed64(out, control.primary_segment);
      coding::PutFixed32(out, control.buffer);
      coding::PutFixed32(out, 0);
      break;
    case IndexControlType::kShipSegment:
      coding::PutFixed64(out, control.primary_segment);
      coding::PutFixed32(out, control.bytes);
      coding::PutFixed32(out, control.level);
      break;
    case IndexControlType::kInstallLevel: {
      const std::string descriptor = control.descriptor.Encode();
      coding::PutFixed32(out, control.level);
      coding::PutFixed32(out, control.emptied.value_or(kNoLevel));
      coding::PutFixed32(out, static_cast<uint32_t>(descriptor.size()));
      coding::PutFixed32(out, 0);
      coding::PutFixed64(out, control.compacted_lsn);
      out->append(descriptor);
      break;
    }
    case IndexControlType::kTrim:
      coding::PutFixed32(out, static_cast<uint32_t>(control.trimmed.size()));
      coding::PutFixed32(out, 0);
      for (const TrimmedCopy& copy : control.trimmed) {
        out->push_back(static_cast<char>(copy.kind));
        out->append(7, '\0');
        coding::PutFixed64(out, copy.primary_segment);
        coding::PutFixed64(out, copy.chain_index);
      }
      break;
  }
}

Status DecodeIndexControl(std::string_view bytes, IndexControl* control) {
  if (!IsIndexControl(bytes)) return Malformed("not a Send-Index message");
  KVS_RETURN_IF_ERROR(CheckControlVersion(bytes));
  if (!Zero(bytes.data() + 6, 2)) return Malformed("not a Send-Index message");
  const char* in = bytes.data();
  IndexControl decoded;
  decoded.type = static_cast<IndexControlType>(in[4]);
  decoded.region_id = coding::DecodeFixed64(in + 8);
  decoded.epoch = coding::DecodeFixed64(in + 16);
  const char* body = in + kHeadBytes;
  switch (decoded.type) {
    case IndexControlType::kFlushTail: {
      if (bytes.size() != kFlushTailBytes) return Malformed("FLUSH-TAIL size");
      const auto kind = static_cast<uint8_t>(body[0]);
      const auto sealed = static_cast<uint8_t>(body[1]);
      const auto starts = static_cast<uint8_t>(body[2]);
      decoded.bytes = coding::DecodeFixed32(body + 4);
      decoded.buffer = coding::DecodeFixed32(body + 24);
      if (!ValidKind(kind) || sealed > 1 || starts > 1 || !Zero(body + 3, 1) ||
          !Zero(body + 28, 4) || decoded.bytes > limits::segment_size_bytes ||
          decoded.buffer > 1) {
        return Malformed("FLUSH-TAIL fields");
      }
      decoded.kind = static_cast<log::LogKind>(kind);
      decoded.sealed = sealed == 1;
      decoded.starts = starts == 1;
      decoded.chain_index = coding::DecodeFixed64(body + 8);
      decoded.primary_segment = coding::DecodeFixed64(body + 16);
      break;
    }
    case IndexControlType::kShipSegment:
      if (bytes.size() != kShipSegmentBytes) {
        return Malformed("SHIP-SEGMENT size");
      }
      decoded.primary_segment = coding::DecodeFixed64(body);
      decoded.bytes = coding::DecodeFixed32(body + 8);
      decoded.level = coding::DecodeFixed32(body + 12);
      if (decoded.bytes == 0 || decoded.bytes > limits::segment_size_bytes ||
          decoded.level >= kLevelsMax) {
        return Malformed("SHIP-SEGMENT fields");
      }
      break;
    case IndexControlType::kInstallLevel: {
      if (bytes.size() < kInstallHeadBytes) {
        return Malformed("INSTALL-LEVEL size");
      }
      decoded.level = coding::DecodeFixed32(body);
      const uint32_t emptied = coding::DecodeFixed32(body + 4);
      const uint32_t size = coding::DecodeFixed32(body + 8);
      if (decoded.level >= kLevelsMax ||
          (emptied != kNoLevel &&
           (emptied >= kLevelsMax || emptied == decoded.level)) ||
          size > kDescriptorBytesMax || !Zero(body + 12, 4) ||
          bytes.size() != kInstallHeadBytes + size) {
        return Malformed("INSTALL-LEVEL fields");
      }
      if (emptied != kNoLevel) decoded.emptied = emptied;
      decoded.compacted_lsn = coding::DecodeFixed64(body + 16);
      const Status descriptor = lsm::LevelDescriptor::Decode(
          bytes.substr(kInstallHeadBytes), &decoded.descriptor);
      if (!descriptor.ok()) {
        return Malformed("INSTALL-LEVEL descriptor: " + descriptor.ToString());
      }
      break;
    }
    case IndexControlType::kTrim: {
      if (bytes.size() < kTrimHeadBytes) return Malformed("TRIM size");
      const uint32_t count = coding::DecodeFixed32(body);
      if (count == 0 || count > kTrimSegmentsMax || !Zero(body + 4, 4) ||
          bytes.size() != kTrimHeadBytes + size_t{count} * kTrimEntryBytes) {
        return Malformed("TRIM fields");
      }
      for (uint32_t i = 0; i < count; ++i) {
        const char* entry = body + 8 + size_t{i} * kTrimEntryBytes;
        const auto kind = static_cast<uint8_t>(entry[0]);
        if (!ValidKind(kind) || !Zero(entry + 1, 7)) {
          return Malformed("TRIM entry " + std::to_string(i));
        }
        decoded.trimmed.push_back({static_cast<log::LogKind>(kind),
                                   coding::DecodeFixed64(entry + 8),
                                   coding::DecodeFixed64(entry + 16)});
      }
      break;
    }
  }
  *control = std::move(decoded);
  return Status::Ok();
}

}  // namespace kvs::replication
