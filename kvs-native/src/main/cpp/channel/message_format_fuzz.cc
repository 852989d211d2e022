// Fuzzes PollMessage, the parser of bytes peers write into our buffers: any
// bytes at a rendezvous point are examined without reading outside the
// buffer, and a complete message's payload lies inside it.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "channel/message_format.h"
#include "util/check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kvs::channel;
  if (size < 4) return 0;
  uint32_t sequence;
  std::memcpy(&sequence, data, 4);
  data += 4;
  size -= 4;
  // A unit-aligned buffer holding the bytes, at least one header long.
  const size_t length = size < kHeaderBytes ? kHeaderBytes : size;
  std::vector<uint64_t> storage((length + 7) / 8, 0);
  char* buffer = reinterpret_cast<char*>(storage.data());
  std::memcpy(buffer, data, size);
  PollResult result;
  MessageHeader header;
  std::string_view payload;
  const kvs::Status status =
      PollMessage(buffer, length, sequence, &result, &header, &payload);
  if (status.ok() && result == PollResult::kComplete) {
    KVS_CHECK(payload.data() >= buffer + kHeaderBytes);
    KVS_CHECK(payload.data() + payload.size() <= buffer + length);
    KVS_CHECK(header.message_bytes <= length);
  }
  return 0;
}
