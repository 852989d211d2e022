#include "replication/replication_format.h"

#include <algorithm>

#include "channel/bootstrap_auth.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace kvs::replication {
namespace {

constexpr size_t kRecordHeaderBytes = 8;
constexpr size_t kKeyBytesMax = 4096;
constexpr size_t kValueBytesMax = size_t{1} << 20;
constexpr size_t kReplyHeaderBytes = 8;

uint32_t RecordCrc(const char* begin, size_t size) {
  return crc32c::Mask(crc32c::Value(begin, size));
}

// Decodes the record at `bytes`; its size, or 0 if it is not a whole valid
// record.
size_t DecodeOne(std::string_view bytes, Record* record) {
  if (bytes.size() < kRecordOverheadBytes) return 0;
  const char* in = bytes.data();
  const auto type = static_cast<uint8_t>(in[0]);
  const auto flags = static_cast<uint8_t>(in[1]);
  const uint16_t key_size = coding::DecodeFixed16(in + 2);
  const uint32_t value_size = coding::DecodeFixed32(in + 4);
  const bool has_id = (flags & log::kRecordHasWriteId) != 0;
  if ((type != 1 && type != 2) || (flags & ~log::kRecordFlagsKnown) != 0 ||
      key_size == 0 || key_size > kKeyBytesMax || value_size > kValueBytesMax ||
      (type == 2 && value_size != 0)) {
    return 0;
  }
  const size_t id_bytes = has_id ? log::kWriteIdBytes : 0;
  const size_t size = kRecordOverheadBytes + key_size + value_size + id_bytes;
  if (bytes.size() < size) return 0;
  const size_t covered = kRecordHeaderBytes + key_size + value_size + id_bytes;
  if (coding::DecodeFixed32(in + covered) != RecordCrc(in, covered)) return 0;
  record->type = static_cast<RecordType>(type);
  record->key = bytes.substr(kRecordHeaderBytes, key_size);
  record->value = bytes.substr(kRecordHeaderBytes + key_size, value_size);
  record->write_id = {};
  record->continues_batch = (flags & log::kRecordContinuesBatch) != 0;
  if (has_id) {
    const char* id = in + kRecordHeaderBytes + key_size + value_size;
    record->write_id = {coding::DecodeFixed64(id),
                        coding::DecodeFixed64(id + 8)};
  }
  return size;
}

}  // namespace

size_t RecordBytes(const Record& record) {
  return kRecordOverheadBytes + record.key.size() + record.value.size() +
         (record.write_id.present() ? log::kWriteIdBytes : 0);
}

void EncodeRecord(const Record& record, std::string* out) {
  const size_t start = out->size();
  out->push_back(static_cast<char>(record.type));
  out->push_back(static_cast<char>(
      (record.write_id.present() ? log::kRecordHasWriteId : 0) |
      (record.continues_batch ? log::kRecordContinuesBatch : 0)));
  coding::PutFixed16(out, static_cast<uint16_t>(record.key.size()));
  coding::PutFixed32(out, static_cast<uint32_t>(record.value.size()));
  out->append(record.key);
  out->append(record.value);
  if (record.write_id.present()) {
    coding::PutFixed64(out, record.write_id.client);
    coding::PutFixed64(out, record.write_id.sequence);
  }
  coding::PutFixed32(out, RecordCrc(out->data() + start, out->size() - start));
}

Status DecodeRecords(std::string_view bytes, std::vector<Record>* records) {
  size_t offset = 0;
  while (offset < bytes.size()) {
    Record record;
    const size_t size = DecodeOne(bytes.substr(offset), &record);
    if (size == 0) {
      return Status::Corruption("malformed replicated record at offset " +
                                std::to_string(offset));
    }
    records->push_back(record);
    offset += size;
  }
  return Status::Ok();
}

size_t ValidPrefix(std::string_view bytes) {
  size_t offset = 0;
  size_t whole = 0;  // the end of the last record that ends no batch
  Record record;
  while (size_t size = DecodeOne(bytes.substr(offset), &record)) {
    offset += size;
    if (!record.continues_batch) whole = offset;
  }
  return whole;
}

bool IsControl(std::string_view message) {
  return message.size() >= 4 && coding::DecodeFixed32(message.data()) == kMagic;
}

Status CheckControlVersion(std::string_view bytes) {
  const auto version = static_cast<uint8_t>(bytes[5]);
  if (version == kControlVersion) return Status::Ok();
  return Status::InvalidArgument(
      "a replication control message of version " + std::to_string(version) +
      "; this server speaks version " + std::to_string(kControlVersion) +
      " (primary and backup run different releases)");
}

void EncodeControlHead(uint8_t type, uint64_t region_id, uint64_t epoch,
                       std::string* out) {
  coding::PutFixed32(out, kMagic);
  out->push_back(static_cast<char>(type));
  out->push_back(static_cast<char>(kControlVersion));
  out->append(2, '\0');
  coding::PutFixed64(out, region_id);
  coding::PutFixed64(out, epoch);
}

namespace {

void EncodeControlFields(const Control& control, std::string* out) {
  EncodeControlHead(static_cast<uint8_t>(control.type), control.region_id,
                    control.epoch, out);
  coding::PutFixed32(out, control.buffer);
  coding::PutFixed32(out, control.bytes);
  coding::PutFixed64(out, control.sequence);
}

}  // namespace

void EncodeControl(const Control& control, std::string* out) {
  EncodeControlFields(control, out);
  if (control.type == ControlType::kOpen) {
    const size_t size = std::min(control.proof.size(), kOpenProofBytes);
    out->append(control.proof.data(), size);
    out->append(kOpenProofBytes - size, '\0');
  }
}

std::string OpenProof(const Control& control, std::string_view stream_key,
                      uint64_t connection_id) {
  std::string fields;
  EncodeControlFields(control, &fields);
  std::string connection;
  coding::PutFixed64(&connection, connection_id);
  return channel::Prove(stream_key, kOpenPurpose, fields, connection);
}

bool VerifyOpen(const Control& control, std::string_view stream_key,
                uint64_t connection_id) {
  std::string fields;
  EncodeControlFields(control, &fields);
  std::string connection;
  coding::PutFixed64(&connection, connection_id);
  return channel::Verify(control.proof, stream_key, kOpenPurpose, fields,
                         connection);
}

Status DecodeControl(std::string_view bytes, Control* control) {
  if (!IsControl(bytes) || bytes.size() < 5 ||
      bytes.size() != (static_cast<uint8_t>(bytes[4]) == 1 ? kOpenControlBytes
                                                           : kControlBytes)) {
    return Status::InvalidArgument("not a replication control message");
  }
  const char* in = bytes.data();
  const auto type = static_cast<uint8_t>(in[4]);
  if (type != 1 && type != 2) {
    return Status::InvalidArgument("unknown replication control message");
  }
  KVS_RETURN_IF_ERROR(CheckControlVersion(bytes));
  if (in[6] != 0 || in[7] != 0) {
    return Status::InvalidArgument("unknown replication control message");
  }
  control->type = static_cast<ControlType>(type);
  control->region_id = coding::DecodeFixed64(in + 8);
  control->epoch = coding::DecodeFixed64(in + 16);
  control->buffer = coding::DecodeFixed32(in + 24);
  control->bytes = coding::DecodeFixed32(in + 28);
  control->sequence = coding::DecodeFixed64(in + 32);
  control->proof = control->type == ControlType::kOpen
                       ? std::string(bytes.substr(kControlBytes))
                       : std::string();
  if (control->type == ControlType::kFlush &&
      (control->buffer >= kBuffers || control->bytes > kBufferBytes)) {
    return Status::InvalidArgument("FLUSH names no buffer range");
  }
  return Status::Ok();
}

void EncodeControlReply(const ControlReply& reply, std::string* out) {
  out->push_back(static_cast<char>(reply.status.code()));
  out->append(kReplyHeaderBytes - 1, '\0');
  if (!reply.status.ok()) {
    out->append(reply.status.message().substr(0, 4096));
    return;
  }
  if (reply.buffers.empty() && reply.copies.empty() && reply.levels.empty()) {
    return;  // a FLUSH's
  }
  coding::PutFixed32(out, static_cast<uint32_t>(reply.buffers.size()));
  coding::PutFixed32(out, static_cast<uint32_t>(reply.copies.size()));
  coding::PutFixed32(out, static_cast<uint32_t>(reply.levels.size()));
  coding::PutFixed32(out, 0);
  for (const fabric::RemoteBuffer& buffer : reply.buffers) {
    coding::PutFixed64(out, buffer.address);
    coding::PutFixed64(out, buffer.key);
    coding::PutFixed64(out, buffer.size);
  }
  for (const HeldCopy& copy : reply.copies) {
    out->push_back(static_cast<char>(copy.kind));
    out->push_back(copy.sealed ? 1 : 0);
    out->append(2, '\0');
    coding::PutFixed32(out, copy.bytes);
    coding::PutFixed64(out, copy.primary_segment);
    coding::PutFixed64(out, copy.chain_index);
  }
  for (const HeldLevel& level : reply.levels) {
    coding::PutFixed32(out, level.level);
    coding::PutFixed32(out, 0);
    coding::PutFixed64(out, level.primary_hash);
  }
}

Status DecodeControlReply(std::string_view bytes, ControlReply* reply) {
  if (bytes.size() < kReplyHeaderBytes) {
    return Status::Corruption("short replication reply");
  }
  const auto raw = static_cast<uint8_t>(bytes[0]);
  // A code this version does not know is reported as INTERNAL.
  const auto code = raw > static_cast<uint8_t>(Status::Code::kNotEnoughReplicas)
                        ? Status::Code::kInternal
                        : static_cast<Status::Code>(raw);
  const std::string_view body = bytes.substr(kReplyHeaderBytes);
  if (code != Status::Code::kOk) {
    reply->status = Status::FromCode(code, body);
    return Status::Ok();
  }
  reply->status = Status::Ok();
  if (body.empty()) return Status::Ok();
  const auto malformed = [] {
    return Status::Corruption("malformed replication reply");
  };
  if (body.size() < 16 || coding::DecodeFixed32(body.data() + 12) != 0) {
    return malformed();
  }
  const uint32_t buffers = coding::DecodeFixed32(body.data());
  const uint32_t copies = coding::DecodeFixed32(body.data() + 4);
  const uint32_t levels = coding::DecodeFixed32(body.data() + 8);
  if (buffers > 64 || copies > kHeldCopiesMax || levels > kHeldLevelsMax ||
      body.size() != 16 + size_t{buffers} * 24 + size_t{copies} * 24 +
                         size_t{levels} * 16) {
    return malformed();
  }
  const char* in = body.data() + 16;
  for (uint32_t i = 0; i < buffers; ++i, in += 24) {
    reply->buffers.push_back({coding::DecodeFixed64(in),
                              coding::DecodeFixed64(in + 8),
                              coding::DecodeFixed64(in + 16)});
  }
  for (uint32_t i = 0; i < copies; ++i, in += 24) {
    const auto kind = static_cast<uint8_t>(in[0]);
    const auto sealed = static_cast<uint8_t>(in[1]);
    if (kind < static_cast<uint8_t>(log::LogKind::kSmall) ||
        kind > static_cast<uint8_t>(log::LogKind::kMedium) || sealed > 1 ||
        in[2] != 0 || in[3] != 0 ||
        coding::DecodeFixed32(in + 4) > kBufferBytes) {
      return malformed();
    }
    reply->copies.push_back({static_cast<log::LogKind>(kind),
                             coding::DecodeFixed64(in + 8),
                             coding::DecodeFixed64(in + 16),
                             coding::DecodeFixed32(in + 4), sealed == 1});
  }
  for (uint32_t i = 0; i < levels; ++i, in += 16) {
    const uint32_t level = coding::DecodeFixed32(in);
    if (level >= kHeldLevelsMax || coding::DecodeFixed32(in + 4) != 0) {
      return malformed();
    }
    reply->levels.push_back({level, coding::DecodeFixed64(in + 8)});
  }
  return Status::Ok();
}

}  // namespace kvs::replication
