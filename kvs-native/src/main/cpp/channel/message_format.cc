#include "channel/message_format.h"

#include <cstring>
#include <string>

#include "util/check.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace kvs::channel {
namespace {

constexpr size_t kHeaderCrcOffset = 56;
constexpr size_t kMarkerOffset = 60;

// Peers write these words while we read them: load them as atomics, so
// the compiler re-reads memory on every poll.
uint32_t LoadAcquire(const char* at) {
  return __atomic_load_n(reinterpret_cast<const uint32_t*>(at),
                         __ATOMIC_ACQUIRE);
}

void StoreRelaxed(char* at, uint32_t value) {
  __atomic_store_n(reinterpret_cast<uint32_t*>(at), value, __ATOMIC_RELAXED);
}

bool KnownKind(uint8_t kind) {
  return kind >= static_cast<uint8_t>(MessageKind::kRequest) &&
         kind <= static_cast<uint8_t>(MessageKind::kFetch);
}

}  // namespace

void EncodeMessage(MessageHeader header, std::string_view payload, char* out) {
  KVS_CHECK(payload.size() <= UINT32_MAX - kHeaderBytes - kUnitBytes);
  header.payload_bytes = static_cast<uint32_t>(payload.size());
  header.payload_crc = crc32c::Value(payload.data(), payload.size());
  header.message_bytes = static_cast<uint32_t>(MessageBytes(payload.size()));
  std::memset(out, 0, header.message_bytes);
  coding::EncodeFixed32(out, kMagic);
  out[4] = static_cast<char>(kFormatVersion);
  out[5] = static_cast<char>(header.kind);
  coding::EncodeFixed32(out + 8, header.payload_bytes);
  coding::EncodeFixed32(out + 12, header.payload_crc);
  coding::EncodeFixed64(out + 16, header.request_id);
  coding::EncodeFixed32(out + 24, header.reply_offset);
  coding::EncodeFixed32(out + 28, header.reply_capacity);
  coding::EncodeFixed32(out + 32, header.sequence);
  coding::EncodeFixed32(out + 36, header.message_bytes);
  coding::EncodeFixed32(out + 40, header.total_bytes);
  coding::EncodeFixed32(out + kHeaderCrcOffset,
                        crc32c::Value(out, kHeaderCrcOffset));
  coding::EncodeFixed32(out + kMarkerOffset, kReceiveMarker ^ header.sequence);
  if (!payload.empty()) {
    std::memcpy(out + kHeaderBytes, payload.data(), payload.size());
    coding::EncodeFixed32(out + header.message_bytes - kTailMarkerBytes,
                          kTailMarker ^ header.sequence);
  }
}

Status PollMessage(const char* at, size_t available, uint32_t sequence,
                   PollResult* result, MessageHeader* header,
                   std::string_view* payload) {
  KVS_CHECK(available >= kHeaderBytes);
  KVS_CHECK(reinterpret_cast<uintptr_t>(at) % 4 == 0);
  *result = PollResult::kNothing;
  if (LoadAcquire(at + kMarkerOffset) != (kReceiveMarker ^ sequence)) {
    return Status::Ok();
  }
  *result = PollResult::kIncomplete;
  char bytes[kHeaderBytes];
  std::memcpy(bytes, at, kHeaderBytes);
  if (coding::DecodeFixed32(bytes + kHeaderCrcOffset) !=
      crc32c::Value(bytes, kHeaderCrcOffset)) {
    return Status::Ok();  // the header may still be landing
  }
  const uint8_t kind = static_cast<uint8_t>(bytes[5]);
  bool reserved_clear = bytes[6] == 0 && bytes[7] == 0;
  for (size_t i = 44; i < kHeaderCrcOffset; ++i) {
    reserved_clear &= bytes[i] == 0;
  }
  MessageHeader decoded;
  decoded.payload_bytes = coding::DecodeFixed32(bytes + 8);
  decoded.payload_crc = coding::DecodeFixed32(bytes + 12);
  decoded.request_id = coding::DecodeFixed64(bytes + 16);
  decoded.reply_offset = coding::DecodeFixed32(bytes + 24);
  decoded.reply_capacity = coding::DecodeFixed32(bytes + 28);
  decoded.sequence = coding::DecodeFixed32(bytes + 32);
  decoded.message_bytes = coding::DecodeFixed32(bytes + 36);
  decoded.total_bytes = coding::DecodeFixed32(bytes + 40);
  if (coding::DecodeFixed32(bytes) != kMagic ||
      static_cast<uint8_t>(bytes[4]) != kFormatVersion || !KnownKind(kind) ||
      !reserved_clear || decoded.sequence != sequence ||
      decoded.message_bytes != MessageBytes(decoded.payload_bytes) ||
      decoded.message_bytes > available) {
    return Status::Corruption(
        "malformed message header at sequence " + std::to_string(sequence) +
        ": " + std::to_string(decoded.payload_bytes) + " payload bytes, " +
        std::to_string(available) + " bytes left in the buffer");
  }
  decoded.kind = static_cast<MessageKind>(kind);
  if (decoded.payload_bytes > 0) {
    if (LoadAcquire(at + decoded.message_bytes - kTailMarkerBytes) !=
        (kTailMarker ^ sequence)) {
      return Status::Ok();
    }
    if (crc32c::Value(at + kHeaderBytes, decoded.payload_bytes) !=
        decoded.payload_crc) {
      return Status::Ok();
    }
  }
  *header = decoded;
  *payload = std::string_view(at + kHeaderBytes, decoded.payload_bytes);
  *result = PollResult::kComplete;
  return Status::Ok();
}

std::string EncodeFetch(const FetchPayload& fetch) {
  std::string payload(kFetchPayloadBytes, '\0');
  coding::EncodeFixed64(payload.data(), fetch.request_id);
  coding::EncodeFixed32(payload.data() + 8, fetch.offset);
  return payload;
}

bool DecodeFetch(std::string_view payload, FetchPayload* fetch) {
  if (payload.size() != kFetchPayloadBytes) return false;
  fetch->request_id = coding::DecodeFixed64(payload.data());
  fetch->offset = coding::DecodeFixed32(payload.data() + 8);
  return true;
}

void ClearMessage(char* at, size_t message_bytes) {
  StoreRelaxed(at + kMarkerOffset, 0);
  if (message_bytes > kHeaderBytes) {
    StoreRelaxed(at + message_bytes - kTailMarkerBytes, 0);
  }
}

}  // namespace kvs::channel
