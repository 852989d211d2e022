// Fuzzes the wire decoders: any input is decoded without reading outside
// it, and whatever decodes re-encodes to exactly the same bytes.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/check.h"
#include "wire/messages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  kvs::wire::Request request;
  if (kvs::wire::DecodeRequest(bytes, &request).ok()) {
    std::string encoded;
    kvs::wire::EncodeRequest(request, &encoded);
    KVS_CHECK(encoded == bytes);
  }
  kvs::wire::Reply reply;
  if (kvs::wire::DecodeReply(bytes, &reply).ok()) {
    std::string encoded;
    kvs::wire::EncodeReply(reply, &encoded);
    KVS_CHECK(encoded == bytes);
  }
  return 0;
}
