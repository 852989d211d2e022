#include "wire/messages.h"

#include "util/check.h"
#include "util/coding.h"

namespace kvs::wire {
namespace {

// A BATCH write's kind.
constexpr uint8_t kBatchPut = 1;
constexpr uint8_t kBatchDelete = 2;

// Reads fields front to back; every read checks the bytes left.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  bool U8(uint8_t* value) {
    if (bytes_.size() < 1) return false;
    *value = static_cast<uint8_t>(bytes_[0]);
    bytes_.remove_prefix(1);
    return true;
  }
  bool U32(uint32_t* value) {
    if (bytes_.size() < 4) return false;
    *value = coding::DecodeFixed32(bytes_.data());
    bytes_.remove_prefix(4);
    return true;
  }
  bool U64(uint64_t* value) {
    if (bytes_.size() < 8) return false;
    *value = coding::DecodeFixed64(bytes_.data());
    bytes_.remove_prefix(8);
    return true;
  }
  bool Bytes(size_t size, std::string_view* value) {
    if (bytes_.size() < size) return false;
    *value = bytes_.substr(0, size);
    bytes_.remove_prefix(size);
    return true;
  }
  bool Zeros(size_t size) {
    if (bytes_.size() < size) return false;
    for (size_t i = 0; i < size; ++i) {
      if (bytes_[i] != 0) return false;
    }
    bytes_.remove_prefix(size);
    return true;
  }
  bool done() const { return bytes_.empty(); }

 private:
  std::string_view bytes_;
};

void PutU8(std::string* out, uint8_t value) {
  out->push_back(static_cast<char>(value));
}
void PutSized(std::string* out, std::string_view bytes) {
  coding::PutFixed32(out, static_cast<uint32_t>(bytes.size()));
  out->append(bytes);
}

Status Invalid(std::string_view what) {
  return Status::InvalidArgument("malformed message: " + std::string(what));
}

Status CheckKey(std::string_view key, const char* what) {
  if (key.empty()) {
    return Invalid(std::string(what) + " is empty");
  }
  if (key.size() > kKeyBytesMax) {
    return Invalid(std::string(what) + " of " + std::to_string(key.size()) +
                   " bytes exceeds " + std::to_string(kKeyBytesMax));
  }
  return Status::Ok();
}

// A u32 length followed by that many bytes, at most `max`.
bool SizedBytes(Reader* in, size_t max, std::string_view* value) {
  uint32_t size = 0;
  return in->U32(&size) && size <= max && in->Bytes(size, value);
}

// A conditional write's id: client u64, sequence u64, floor u64, flags u32
// (bit 0: a retry; the others zero).
void PutWriteId(std::string* out, const Request& request) {
  coding::PutFixed64(out, request.client_id);
  coding::PutFixed64(out, request.sequence);
  coding::PutFixed64(out, request.floor);
  coding::PutFixed32(out, request.retry ? 1u : 0u);
}

bool ReadWriteId(Reader* in, Request* request) {
  uint32_t flags = 0;
  if (!in->U64(&request->client_id) || !in->U64(&request->sequence) ||
      !in->U64(&request->floor) || !in->U32(&flags) || flags > 1) {
    return false;
  }
  request->retry = flags == 1;
  return true;
}

bool KnownStatus(uint8_t status) { return status <= KVS_NOT_ENOUGH_REPLICAS; }

}  // namespace

const char* OpcodeName(Opcode opcode) {
  switch (opcode) {
    case Opcode::kNoop:
      return "NOOP";
    case Opcode::kPut:
      return "PUT";
    case Opcode::kGet:
      return "GET";
    case Opcode::kDelete:
      return "DELETE";
    case Opcode::kScan:
      return "SCAN";
    case Opcode::kMultiGet:
      return "MULTI_GET";
    case Opcode::kCompareAndSet:
      return "COMPARE_AND_SET";
    case Opcode::kIncrement:
      return "INCREMENT";
    case Opcode::kBatch:
      return "BATCH";
    case Opcode::kScanReverse:
      return "SCAN_REVERSE";
  }
  return "UNKNOWN";
}

bool Writes(Opcode opcode) {
  return opcode == Opcode::kPut || opcode == Opcode::kDelete ||
         opcode == Opcode::kCompareAndSet || opcode == Opcode::kIncrement ||
         opcode == Opcode::kBatch;
}

Status ValidateRequest(const Request& request) {
  switch (request.opcode) {
    case Opcode::kNoop:
      return Status::Ok();
    case Opcode::kPut:
      KVS_RETURN_IF_ERROR(CheckKey(request.key, "key"));
      if (request.value.size() > kValueBytesMax) {
        return Invalid("value of " + std::to_string(request.value.size()) +
                       " bytes exceeds " + std::to_string(kValueBytesMax));
      }
      return Status::Ok();
    case Opcode::kGet:
    case Opcode::kDelete:
    case Opcode::kIncrement:
      return CheckKey(request.key, "key");
    case Opcode::kCompareAndSet:
      KVS_RETURN_IF_ERROR(CheckKey(request.key, "key"));
      for (const auto& value : {request.expected, request.replacement}) {
        if (value && value->size() > kValueBytesMax) {
          return Invalid("value of " + std::to_string(value->size()) +
                         " bytes exceeds " + std::to_string(kValueBytesMax));
        }
      }
      return Status::Ok();
    case Opcode::kScan:
    case Opcode::kScanReverse:
      if (request.key.size() > kKeyBytesMax ||
          (request.end && request.end->size() > kKeyBytesMax)) {
        return Invalid("scan bound exceeds " + std::to_string(kKeyBytesMax) +
                       " bytes");
      }
      if (request.limit == 0 || request.limit > kScanLimitMax) {
        return Invalid("scan limit " + std::to_string(request.limit) +
                       " outside 1.." + std::to_string(kScanLimitMax));
      }
      if (request.max_bytes == 0 || request.max_bytes > kScanBytesMax) {
        return Invalid("scan max_bytes " + std::to_string(request.max_bytes) +
                       " outside 1.." + std::to_string(kScanBytesMax));
      }
      return Status::Ok();
    case Opcode::kMultiGet:
      if (request.keys.empty() || request.keys.size() > kMultiGetKeysMax) {
        return Invalid("multi-get of " + std::to_string(request.keys.size()) +
                       " keys outside 1.." + std::to_string(kMultiGetKeysMax));
      }
      for (const std::string_view key : request.keys) {
        KVS_RETURN_IF_ERROR(CheckKey(key, "multi-get key"));
      }
      return Status::Ok();
    case Opcode::kBatch:
      if (request.writes.empty() || request.writes.size() > kBatchWritesMax) {
        return Invalid("batch of " + std::to_string(request.writes.size()) +
                       " writes outside 1.." + std::to_string(kBatchWritesMax));
      }
      for (const BatchWrite& write : request.writes) {
        KVS_RETURN_IF_ERROR(CheckKey(write.key, "batch key"));
        if (write.value.size() > kValueBytesMax ||
            (!write.put && !write.value.empty())) {
          return Invalid("batch value of " +
                         std::to_string(write.value.size()) +
                         " bytes (a delete has none; a put at most " +
                         std::to_string(kValueBytesMax) + ")");
        }
      }
      return Status::Ok();
  }
  return Invalid("unknown opcode");
}

void EncodeRequest(const Request& request, std::string* out) {
  const Status valid = ValidateRequest(request);
  KVS_CHECK_MSG(valid.ok(), "encoding an invalid request");
  PutU8(out, kVersion);
  PutU8(out, static_cast<uint8_t>(request.opcode));
  out->append(6, '\0');
  coding::PutFixed64(out, request.request_id);
  coding::PutFixed64(out, request.region_id);
  coding::PutFixed64(out, request.epoch);
  switch (request.opcode) {
    case Opcode::kNoop:
      break;
    case Opcode::kPut:
      coding::PutFixed32(out, static_cast<uint32_t>(request.key.size()));
      coding::PutFixed32(out, static_cast<uint32_t>(request.value.size()));
      out->append(request.key);
      out->append(request.value);
      break;
    case Opcode::kGet:
    case Opcode::kDelete:
      PutSized(out, request.key);
      break;
    case Opcode::kCompareAndSet:
      coding::PutFixed32(out, static_cast<uint32_t>(request.key.size()));
      for (const auto& value : {request.expected, request.replacement}) {
        coding::PutFixed32(
            out, value ? static_cast<uint32_t>(value->size()) : kNoValue);
      }
      PutWriteId(out, request);
      out->append(request.key);
      if (request.expected) out->append(*request.expected);
      if (request.replacement) out->append(*request.replacement);
      break;
    case Opcode::kIncrement:
      coding::PutFixed32(out, static_cast<uint32_t>(request.key.size()));
      coding::PutFixed64(out, static_cast<uint64_t>(request.delta));
      PutWriteId(out, request);
      out->append(request.key);
      break;
    case Opcode::kScan:
    case Opcode::kScanReverse:
      coding::PutFixed32(out, static_cast<uint32_t>(request.key.size()));
      coding::PutFixed32(out, request.end
                                  ? static_cast<uint32_t>(request.end->size())
                                  : kNoEndBound);
      coding::PutFixed32(out, request.limit);
      coding::PutFixed32(out, request.max_bytes);
      out->append(request.key);
      if (request.end) out->append(*request.end);
      break;
    case Opcode::kMultiGet:
      coding::PutFixed32(out, static_cast<uint32_t>(request.keys.size()));
      for (const std::string_view key : request.keys) PutSized(out, key);
      break;
    case Opcode::kBatch:
      coding::PutFixed32(out, static_cast<uint32_t>(request.writes.size()));
      for (const BatchWrite& write : request.writes) {
        PutU8(out, write.put ? kBatchPut : kBatchDelete);
        coding::PutFixed32(out, static_cast<uint32_t>(write.key.size()));
        coding::PutFixed32(out, static_cast<uint32_t>(write.value.size()));
        out->append(write.key);
        out->append(write.value);
      }
      break;
  }
}

Status DecodeRequest(std::string_view bytes, Request* request) {
  *request = Request{};
  Reader in(bytes);
  uint8_t version = 0, opcode = 0;
  if (!in.U8(&version) || !in.U8(&opcode) || !in.Zeros(6) ||
      !in.U64(&request->request_id) || !in.U64(&request->region_id) ||
      !in.U64(&request->epoch)) {
    return Invalid("request header of " + std::to_string(bytes.size()) +
                   " bytes is short or has reserved bits set");
  }
  if (version != kVersion) {
    return Invalid("protocol version " + std::to_string(version) +
                   ", this end speaks " + std::to_string(kVersion));
  }
  if (opcode > kOpcodeMax) {
    return Invalid("unknown opcode " + std::to_string(opcode));
  }
  request->opcode = static_cast<Opcode>(opcode);
  bool ok = true;
  switch (request->opcode) {
    case Opcode::kNoop:
      break;
    case Opcode::kPut: {
      uint32_t key_size = 0, value_size = 0;
      ok = in.U32(&key_size) && in.U32(&value_size) &&
           key_size <= kKeyBytesMax && value_size <= kValueBytesMax &&
           in.Bytes(key_size, &request->key) &&
           in.Bytes(value_size, &request->value);
      break;
    }
    case Opcode::kGet:
    case Opcode::kDelete:
      ok = SizedBytes(&in, kKeyBytesMax, &request->key);
      break;
    case Opcode::kCompareAndSet: {
      uint32_t key_size = 0, expected_size = 0, replacement_size = 0;
      const auto fits = [](uint32_t size) {
        return size == kNoValue || size <= kValueBytesMax;
      };
      ok = in.U32(&key_size) && in.U32(&expected_size) &&
           in.U32(&replacement_size) && key_size <= kKeyBytesMax &&
           fits(expected_size) && fits(replacement_size) &&
           ReadWriteId(&in, request) && in.Bytes(key_size, &request->key);
      for (const auto& [size, field] :
           {std::pair{expected_size, &request->expected},
            std::pair{replacement_size, &request->replacement}}) {
        if (!ok || size == kNoValue) continue;
        std::string_view value;
        ok = in.Bytes(size, &value);
        *field = value;
      }
      break;
    }
    case Opcode::kIncrement: {
      uint32_t key_size = 0;
      uint64_t delta = 0;
      ok = in.U32(&key_size) && in.U64(&delta) && key_size <= kKeyBytesMax &&
           ReadWriteId(&in, request) && in.Bytes(key_size, &request->key);
      request->delta = static_cast<int64_t>(delta);
      break;
    }
    case Opcode::kScan:
    case Opcode::kScanReverse: {
      uint32_t start_size = 0, end_size = 0;
      ok = in.U32(&start_size) && in.U32(&end_size) &&
           in.U32(&request->limit) && in.U32(&request->max_bytes) &&
           start_size <= kKeyBytesMax &&
           (end_size == kNoEndBound || end_size <= kKeyBytesMax) &&
           in.Bytes(start_size, &request->key);
      if (ok && end_size != kNoEndBound) {
        std::string_view end;
        ok = in.Bytes(end_size, &end);
        request->end = end;
      }
      break;
    }
    case Opcode::kMultiGet: {
      uint32_t count = 0;
      ok = in.U32(&count) && count <= kMultiGetKeysMax;
      for (uint32_t i = 0; ok && i < count; ++i) {
        std::string_view key;
        ok = SizedBytes(&in, kKeyBytesMax, &key);
        request->keys.push_back(key);
      }
      break;
    }
    case Opcode::kBatch: {
      uint32_t count = 0;
      ok = in.U32(&count) && count <= kBatchWritesMax;
      for (uint32_t i = 0; ok && i < count; ++i) {
        uint8_t kind = 0;
        uint32_t key_size = 0, value_size = 0;
        BatchWrite write;
        ok = in.U8(&kind) && (kind == kBatchPut || kind == kBatchDelete) &&
             in.U32(&key_size) && in.U32(&value_size) &&
             key_size <= kKeyBytesMax && value_size <= kValueBytesMax &&
             in.Bytes(key_size, &write.key) &&
             in.Bytes(value_size, &write.value);
        write.put = kind == kBatchPut;
        request->writes.push_back(write);
      }
      break;
    }
  }
  if (!ok) {
    return Invalid(std::string(OpcodeName(request->opcode)) +
                   " body is cut short or has a size above the limits");
  }
  if (!in.done()) {
    return Invalid(std::string(OpcodeName(request->opcode)) +
                   " body has trailing bytes");
  }
  return ValidateRequest(*request);
}

Status ValidateReply(const Reply& reply) {
  if (static_cast<uint8_t>(reply.opcode) > kOpcodeMax) {
    return Invalid("unknown opcode");
  }
  if (!KnownStatus(static_cast<uint8_t>(reply.status))) {
    return Invalid("unknown status");
  }
  if (reply.status != Status::Code::kOk) {
    return reply.message.size() <= kMessageTextBytesMax
               ? Status::Ok()
               : Invalid("error message too long");
  }
  if (reply.value.size() > kValueBytesMax) {
    return Invalid("value too large");
  }
  for (const auto& [key, value] : reply.pairs) {
    if (key.size() > kKeyBytesMax || value.size() > kValueBytesMax) {
      return Invalid("scan pair too large");
    }
  }
  if (reply.pairs.size() > kScanLimitMax) {
    return Invalid("too many scan pairs");
  }
  if (reply.values.size() > kMultiGetKeysMax) {
    return Invalid("too many multi-get values");
  }
  if (reply.current &&
      (reply.applied || reply.current->size() > kValueBytesMax)) {
    return Invalid(
        "a compare-and-set's current value is sent only when it "
        "was not applied, and within the value limit");
  }
  for (const auto& value : reply.values) {
    if (value && value->size() > kValueBytesMax) {
      return Invalid("multi-get value too large");
    }
  }
  return Status::Ok();
}

void EncodeReply(const Reply& reply, std::string* out) {
  const Status valid = ValidateReply(reply);
  KVS_CHECK_MSG(valid.ok(), "encoding an invalid reply");
  PutU8(out, kVersion);
  PutU8(out, static_cast<uint8_t>(reply.opcode));
  PutU8(out, static_cast<uint8_t>(reply.status));
  out->append(5, '\0');
  coding::PutFixed64(out, reply.request_id);
  if (reply.status != Status::Code::kOk) {
    PutSized(out, reply.message);
    return;
  }
  switch (reply.opcode) {
    case Opcode::kNoop:
    case Opcode::kPut:
    case Opcode::kDelete:
    case Opcode::kBatch:
      break;
    case Opcode::kGet:
      PutSized(out, reply.value);
      break;
    case Opcode::kScan:
    case Opcode::kScanReverse:
      coding::PutFixed32(out, static_cast<uint32_t>(reply.pairs.size()));
      PutU8(out, reply.more ? 1 : 0);
      for (const auto& [key, value] : reply.pairs) {
        coding::PutFixed32(out, static_cast<uint32_t>(key.size()));
        coding::PutFixed32(out, static_cast<uint32_t>(value.size()));
        out->append(key);
        out->append(value);
      }
      break;
    case Opcode::kMultiGet:
      coding::PutFixed32(out, static_cast<uint32_t>(reply.values.size()));
      for (const auto& value : reply.values) {
        PutU8(out, value ? 1 : 0);
        PutSized(out, value ? *value : std::string_view());
      }
      break;
    case Opcode::kCompareAndSet:
      PutU8(out, reply.applied ? 1 : 0);
      PutU8(out, reply.current ? 1 : 0);
      PutSized(out, reply.current ? *reply.current : std::string_view());
      coding::PutFixed64(out, reply.lsn);
      break;
    case Opcode::kIncrement:
      coding::PutFixed64(out, static_cast<uint64_t>(reply.counter));
      coding::PutFixed64(out, reply.lsn);
      break;
  }
}

Status DecodeReply(std::string_view bytes, Reply* reply) {
  *reply = Reply{};
  Reader in(bytes);
  uint8_t version = 0, opcode = 0, status = 0;
  if (!in.U8(&version) || !in.U8(&opcode) || !in.U8(&status) || !in.Zeros(5) ||
      !in.U64(&reply->request_id)) {
    return Invalid("reply header of " + std::to_string(bytes.size()) +
                   " bytes is short or has reserved bits set");
  }
  if (version != kVersion) {
    return Invalid("protocol version " + std::to_string(version) +
                   ", this end speaks " + std::to_string(kVersion));
  }
  if (opcode > kOpcodeMax) {
    return Invalid("unknown opcode " + std::to_string(opcode));
  }
  if (!KnownStatus(status)) {
    return Invalid("unknown status " + std::to_string(status));
  }
  reply->opcode = static_cast<Opcode>(opcode);
  reply->status = static_cast<Status::Code>(status);
  bool ok = true;
  if (reply->status != Status::Code::kOk) {
    ok = SizedBytes(&in, kMessageTextBytesMax, &reply->message);
  } else {
    switch (reply->opcode) {
      case Opcode::kNoop:
      case Opcode::kPut:
      case Opcode::kDelete:
      case Opcode::kBatch:
        break;
      case Opcode::kGet:
        ok = SizedBytes(&in, kValueBytesMax, &reply->value);
        break;
      case Opcode::kScan:
      case Opcode::kScanReverse: {
        uint32_t count = 0;
        uint8_t more = 0;
        ok = in.U32(&count) && count <= kScanLimitMax && in.U8(&more) &&
             more <= 1;
        reply->more = more == 1;
        for (uint32_t i = 0; ok && i < count; ++i) {
          uint32_t key_size = 0, value_size = 0;
          std::string_view key, value;
          ok = in.U32(&key_size) && in.U32(&value_size) &&
               key_size <= kKeyBytesMax && value_size <= kValueBytesMax &&
               in.Bytes(key_size, &key) && in.Bytes(value_size, &value);
          reply->pairs.emplace_back(key, value);
        }
        break;
      }
      case Opcode::kMultiGet: {
        uint32_t count = 0;
        ok = in.U32(&count) && count <= kMultiGetKeysMax;
        for (uint32_t i = 0; ok && i < count; ++i) {
          uint8_t found = 0;
          std::string_view value;
          ok = in.U8(&found) && found <= 1 &&
               SizedBytes(&in, kValueBytesMax, &value) &&
               (found == 1 || value.empty());
          reply->values.push_back(found == 1
                                      ? std::optional<std::string_view>(value)
                                      : std::nullopt);
        }
        break;
      }
      case Opcode::kCompareAndSet: {
        uint8_t applied = 0, present = 0;
        std::string_view value;
        ok = in.U8(&applied) && applied <= 1 && in.U8(&present) &&
             present <= 1 && !(applied == 1 && present == 1) &&
             SizedBytes(&in, kValueBytesMax, &value) &&
             (present == 1 || value.empty()) && in.U64(&reply->lsn);
        reply->applied = applied == 1;
        if (present == 1) reply->current = value;
        break;
      }
      case Opcode::kIncrement: {
        uint64_t counter = 0;
        ok = in.U64(&counter) && in.U64(&reply->lsn);
        reply->counter = static_cast<int64_t>(counter);
        break;
      }
    }
  }
  if (!ok) {
    return Invalid(std::string(OpcodeName(reply->opcode)) +
                   " reply body is cut short or malformed");
  }
  if (!in.done()) {
    return Invalid(std::string(OpcodeName(reply->opcode)) +
                   " reply body has trailing bytes");
  }
  return Status::Ok();
}

}  // namespace kvs::wire
