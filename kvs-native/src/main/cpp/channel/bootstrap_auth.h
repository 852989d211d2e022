// Authentication of the fabric bootstrap: before a peer learns the server's
// endpoint address or request-buffer key, it proves it holds the secret of
// the kind of connection it asks for, and the server proves it back.
//
// Two kinds of visitor come through one port, each with its own secret
// (docs/OPERATIONS.md, "Security"): a *client* (reads and writes data)
// proves the client secret; a *peer* (a primary replicating to this
// server) proves the cluster secret, which also authorises the control
// RPC. The kind is fixed at the bootstrap and decides what the connection
// may send (service/region_service.h, "Doors"): a client connection never
// carries replication messages.
//
// The server speaks first, with a Challenge (little-endian):
//
//   u32  magic "KVSC"
//   u8   version (3, the bootstrap version)
//   u8   flags: bit 0 set if a client must prove the client secret, bit 1
//        if a peer must prove the cluster secret
//   u16  zero
//   32   server nonce (random per connection)
//   u32  CRC32C of the bytes before
//
// The Hello then names its kind and carries its own 32-byte nonce and
// proof = HMAC-SHA256(secret of the kind, HelloPurpose(kind) 0x00
// server_nonce client_nonce); the server's Welcome, if OK, carries
// HMAC-SHA256(same secret, WelcomePurpose(kind) 0x00 client_nonce
// server_nonce). Without a secret of that kind both proofs are zeros and
// nobody checks them. The purposes differ by direction and kind, so no
// proof can be replayed as another; the nonces are fresh, so no proof can
// be replayed on another connection.
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

// Who is at the other end of a connection, as it proved at the bootstrap.
enum class ConnectionKind : uint8_t {
  kClient = 0,  // an application: client requests only
  kPeer = 1,    // a server of the cluster: replication messages too
};
const char* ConnectionKindName(ConnectionKind kind);

// What a Hello's and a Welcome's proofs are computed over, by kind.
std::string_view HelloPurpose(ConnectionKind kind);
std::string_view WelcomePurpose(ConnectionKind kind);

struct Challenge {
  bool client_proof_required = false;  // clients must prove the client secret
  bool peer_proof_required = false;    // peers must prove the cluster secret
  std::string nonce;                   // kNonceBytes

  bool ProofRequired(ConnectionKind kind) const {
    return kind == ConnectionKind::kPeer ? peer_proof_required
                                         : client_proof_required;
  }
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
