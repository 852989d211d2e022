// Authentication of the fabric bootstrap by the cluster secret: before a
// client learns the server's endpoint address or request-buffer key, it
// proves it holds the secret, and the server proves it back.
//
// The server speaks first, with a Challenge (little-endian):
//
//   u32  magic "KVSC"
//   u8   version (2, the bootstrap version)
//   u8   flags: bit 0 set if the server requires a proof of the secret
//   u16  zero
//   32   server nonce (random per connection)
//   u32  CRC32C of the bytes before
//
// The client's Hello then carries its own 32-byte nonce and
// proof = HMAC-SHA256(secret, "kvs fabric hello v2" 0x00 server_nonce
// client_nonce); the server's Welcome, if OK, carries
// HMAC-SHA256(secret, "kvs fabric welcome v2" 0x00 client_nonce
// server_nonce). Without a secret both proofs are zeros and nobody checks
// them. The purposes differ, so neither proof can be replayed as the other;
// the nonces are fresh, so no proof can be replayed on another connection.
//
// Thread safety: free functions.

#ifndef KVS_CHANNEL_BOOTSTRAP_AUTH_H_
#define KVS_CHANNEL_BOOTSTRAP_AUTH_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace kvs::channel {

inline constexpr size_t kNonceBytes = 32;
inline constexpr size_t kProofBytes = 32;  // HMAC-SHA256
inline constexpr size_t kChallengeBytes = 4 + 1 + 1 + 2 + kNonceBytes + 4;
// The cluster secret's bounds (as in the Java ClusterSecret).
inline constexpr size_t kSecretBytesMin = 16;
inline constexpr size_t kSecretBytesMax = 1024;

inline constexpr std::string_view kHelloPurpose = "kvs fabric hello v2";
inline constexpr std::string_view kWelcomePurpose = "kvs fabric welcome v2";

struct Challenge {
  bool proof_required = false;
  std::string nonce;  // kNonceBytes
};

std::string EncodeChallenge(const Challenge& challenge);
// Parses exactly kChallengeBytes of `bytes` (untrusted: from the network).
Status DecodeChallenge(std::string_view bytes, Challenge* challenge);

// kNonceBytes of cryptographically random bytes.
std::string RandomNonce();

// HMAC-SHA256(secret, purpose 0x00 first second): kProofBytes. An empty
// secret gives zeros (no proof).
std::string Prove(std::string_view secret, std::string_view purpose,
                  std::string_view first, std::string_view second);

// Whether `proof` equals Prove(secret, purpose, first, second), compared in
// constant time.
bool Verify(std::string_view proof, std::string_view secret,
            std::string_view purpose, std::string_view first,
            std::string_view second);

// Checks a configured secret's size (empty: no secret, fine).
Status CheckSecret(std::string_view secret);

}  // namespace kvs::channel

#endif  // KVS_CHANNEL_BOOTSTRAP_AUTH_H_
