#include "channel/stream_format.h"

#include "util/coding.h"

namespace kvs::channel {
namespace {

void AppendHeader(FrameType type, uint64_t id, size_t payload_bytes,
                  std::string* out) {
  char header[kFrameHeaderBytes] = {};
  header[0] = static_cast<char>(kStreamVersion);
  header[1] = static_cast<char>(type);
  coding::EncodeFixed32(header + 4, static_cast<uint32_t>(payload_bytes));
  coding::EncodeFixed64(header + 8, id);
  out->append(header, sizeof header);
}

}  // namespace

void AppendFrame(FrameType type, uint64_t id, std::string_view payload,
                 std::string* out) {
  AppendHeader(type, id, payload.size(), out);
  out->append(payload);
}

void AppendWrite(uint64_t sequence, uint64_t key, uint64_t offset,
                 std::string_view bytes, std::string* out) {
  AppendHeader(FrameType::kWrite, sequence, kWriteHeadBytes + bytes.size(),
               out);
  coding::PutFixed64(out, key);
  coding::PutFixed64(out, offset);
  out->append(bytes);
}

Status DecodeFrameHeader(std::string_view bytes, bool server,
                         FrameHeader* header) {
  if (bytes.size() < kFrameHeaderBytes) {
    return Status::InvalidArgument("stream frame: header cut short");
  }
  if (static_cast<uint8_t>(bytes[0]) != kStreamVersion) {
    return Status::InvalidArgument(
        "stream frame: unknown version " +
        std::to_string(static_cast<uint8_t>(bytes[0])));
  }
  if (bytes[2] != 0 || bytes[3] != 0) {
    return Status::InvalidArgument("stream frame: reserved bytes not zero");
  }
  const auto type = static_cast<FrameType>(bytes[1]);
  const bool known =
      server ? type == FrameType::kMessage || type == FrameType::kWrite
             : type == FrameType::kReply || type == FrameType::kWritten;
  if (!known) {
    return Status::InvalidArgument(
        "stream frame: type " + std::to_string(static_cast<uint8_t>(bytes[1])) +
        " not taken by the " + (server ? "server" : "writer"));
  }
  header->type = type;
  header->payload_bytes = coding::DecodeFixed32(bytes.data() + 4);
  header->id = coding::DecodeFixed64(bytes.data() + 8);
  if (header->payload_bytes > kStreamPayloadMax) {
    return Status::InvalidArgument("stream frame: payload of " +
                                   std::to_string(header->payload_bytes) +
                                   " bytes is above the limit");
  }
  if (type == FrameType::kWrite && header->payload_bytes < kWriteHeadBytes) {
    return Status::InvalidArgument("stream frame: WRITE without its place");
  }
  if (type == FrameType::kWritten && header->payload_bytes != 0) {
    return Status::InvalidArgument("stream frame: WRITTEN with a payload");
  }
  return Status::Ok();
}

Status DecodeWrite(std::string_view payload, uint64_t* key, uint64_t* offset,
                   std::string_view* bytes) {
  if (payload.size() < kWriteHeadBytes) {
    return Status::InvalidArgument("stream frame: WRITE without its place");
  }
  *key = coding::DecodeFixed64(payload.data());
  *offset = coding::DecodeFixed64(payload.data() + 8);
  *bytes = payload.substr(kWriteHeadBytes);
  return Status::Ok();
}

}  // namespace kvs::channel
