// The client port's handshake (docs/PROTOCOL.md "Client TCP handshake"), the
// server's side: a Challenge (the fabric bootstrap's layout, bit 0 of its
// flags set when a proof of the client secret is required), the client's
// Hello, and the server's Admission. Each travels as one frame of the port
// (a little-endian u32 length, then the body). The Java client
// (io.kvs.core.wire.ClientHandshake) speaks the other side.
//
// Thread safety: free functions.

#ifndef KVS_DOOR_CLIENT_HANDSHAKE_H_
#define KVS_DOOR_CLIENT_HANDSHAKE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "channel/bootstrap_auth.h"
#include "util/status.h"

namespace kvs::door {

inline constexpr size_t kHelloBytes = 76;
inline constexpr size_t kAdmissionMessageMax = 1024;
inline constexpr std::string_view kHelloPurpose = "kvs tcp hello v1";
inline constexpr std::string_view kAdmitPurpose = "kvs tcp admit v1";

struct Hello {
  std::string nonce;  // channel::kNonceBytes
  std::string proof;  // channel::kProofBytes; zeros without a secret
};

// Parses a Hello body (untrusted: the first frame a client sends).
Status DecodeHello(std::string_view body, Hello* hello);
// The body of a Hello (what a client sends; for tests and tools).
std::string EncodeHello(const Hello& hello);

// The body of an Admission: `status` (kOk, or why it is refused), a message
// (truncated to kAdmissionMessageMax bytes), and the server's proof.
std::string EncodeAdmission(uint8_t status, std::string_view message,
                            std::string_view proof);
// Parses an Admission body (for tests and tools).
Status DecodeAdmission(std::string_view body, uint8_t* status,
                       std::string* message, std::string* proof);

}  // namespace kvs::door

#endif  // KVS_DOOR_CLIENT_HANDSHAKE_H_
