// Fuzzes DecodeChallenge: a client reads a challenge from whatever answers
// on a fabric bootstrap port.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "channel/bootstrap_auth.h"
#include "util/check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  kvs::channel::Challenge challenge;
  if (kvs::channel::DecodeChallenge(bytes, &challenge).ok()) {
    KVS_CHECK(challenge.nonce.size() == kvs::channel::kNonceBytes);
    KVS_CHECK(kvs::channel::EncodeChallenge(challenge) == bytes);
  }
  return 0;
}
