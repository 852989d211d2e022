// Fuzzes what a fabric bootstrap reads from whoever connects or answers:
// DecodeChallenge (a client reads a challenge from whatever answers on a
// bootstrap port) and DecodeHello (a server's acceptor reads a Hello from
// whoever connects).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "channel/bootstrap.h"
#include "channel/bootstrap_auth.h"
#include "util/check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  kvs::channel::Challenge challenge;
  if (kvs::channel::DecodeChallenge(bytes, &challenge).ok()) {
    KVS_CHECK(challenge.nonce.size() == kvs::channel::kNonceBytes);
    KVS_CHECK(kvs::channel::EncodeChallenge(challenge) == bytes);
  }
  if (bytes.size() >= kvs::channel::kHelloHeadBytes) {
    size_t total = 0;
    const bool sized = kvs::channel::HelloBytes(bytes, &total).ok();
    kvs::channel::Hello hello;
    if (kvs::channel::DecodeHello(bytes, &hello).ok()) {
      KVS_CHECK(sized && total == bytes.size());
      KVS_CHECK(kvs::channel::EncodeHello(hello) == bytes);
    }
  }
  return 0;
}
