#include "channel/bootstrap_auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "util/check.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace kvs::channel {
namespace {

constexpr uint32_t kChallengeMagic = 0x43535654;  // "KVSC" little-endian
constexpr uint8_t kChallengeVersion = 3;
constexpr uint8_t kFlagClientProofRequired = 1;
constexpr uint8_t kFlagPeerProofRequired = 2;

}  // namespace

const char* ConnectionKindName(ConnectionKind kind) {
  return kind == ConnectionKind::kPeer ? "peer" : "client";
}

std::string_view HelloPurpose(ConnectionKind kind) {
  return kind == ConnectionKind::kPeer ? "kvs fabric hello v3 peer"
                                       : "kvs fabric hello v3 client";
}

std::string_view WelcomePurpose(ConnectionKind kind) {
  return kind == ConnectionKind::kPeer ? "kvs fabric welcome v3 peer"
                                       : "kvs fabric welcome v3 client";
}

std::string EncodeChallenge(const Challenge& challenge) {
  KVS_CHECK(challenge.nonce.size() == kNonceBytes);
  std::string out;
  coding::PutFixed32(&out, kChallengeMagic);
  out.push_back(static_cast<char>(kChallengeVersion));
  out.push_back(static_cast<char>(
      (challenge.client_proof_required ? kFlagClientProofRequired : 0) |
      (challenge.peer_proof_required ? kFlagPeerProofRequired : 0)));
  coding::PutFixed16(&out, 0);
  out += challenge.nonce;
  coding::PutFixed32(&out, crc32c::Value(out.data(), out.size()));
  KVS_CHECK(out.size() == kChallengeBytes);
  return out;
}

Status DecodeChallenge(std::string_view bytes, Challenge* challenge) {
  if (bytes.size() != kChallengeBytes) {
    return Status::InvalidArgument("bootstrap: a challenge of " +
                                   std::to_string(bytes.size()) + " bytes");
  }
  if (coding::DecodeFixed32(bytes.data()) != kChallengeMagic) {
    return Status::InvalidArgument("bootstrap: not a KVS fabric server");
  }
  if (static_cast<uint8_t>(bytes[4]) != kChallengeVersion) {
    return Status::InvalidArgument(
        "bootstrap: a server whose challenge is of version " +
        std::to_string(static_cast<uint8_t>(bytes[4])) +
        "; this end speaks version " + std::to_string(kChallengeVersion) +
        " (they run different releases)");
  }
  const size_t body = kChallengeBytes - 4;
  if (crc32c::Value(bytes.data(), body) !=
      coding::DecodeFixed32(bytes.data() + body)) {
    return Status::Corruption("bootstrap: challenge fails its checksum");
  }
  const uint8_t flags = static_cast<uint8_t>(bytes[5]);
  if ((flags & ~(kFlagClientProofRequired | kFlagPeerProofRequired)) != 0 ||
      coding::DecodeFixed16(bytes.data() + 6) != 0) {
    return Status::InvalidArgument("bootstrap: challenge with unknown flags");
  }
  challenge->client_proof_required = (flags & kFlagClientProofRequired) != 0;
  challenge->peer_proof_required = (flags & kFlagPeerProofRequired) != 0;
  challenge->nonce = std::string(bytes.substr(8, kNonceBytes));
  return Status::Ok();
}

std::string RandomNonce() {
  std::string nonce(kNonceBytes, '\0');
  // Fails only if the OS has no entropy source at all: not an operating
  // error this process can do anything about.
  KVS_CHECK(RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()),
                       static_cast<int>(nonce.size())) == 1);
  return nonce;
}

std::string Prove(std::string_view secret, std::string_view purpose,
                  std::string_view first, std::string_view second) {
  std::string proof(kProofBytes, '\0');
  if (secret.empty()) return proof;
  std::string message;
  message.reserve(purpose.size() + 1 + first.size() + second.size());
  message.append(purpose);
  message.push_back('\0');
  message.append(first);
  message.append(second);
  unsigned int size = 0;
  const unsigned char* done = HMAC(
      EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
      reinterpret_cast<const unsigned char*>(message.data()), message.size(),
      reinterpret_cast<unsigned char*>(proof.data()), &size);
  KVS_CHECK(done != nullptr && size == kProofBytes);
  return proof;
}

bool Verify(std::string_view proof, std::string_view secret,
            std::string_view purpose, std::string_view first,
            std::string_view second) {
  if (proof.size() != kProofBytes || secret.empty()) return false;
  const std::string expected = Prove(secret, purpose, first, second);
  return CRYPTO_memcmp(expected.data(), proof.data(), kProofBytes) == 0;
}

Status CheckSecret(std::string_view secret) {
  if (!secret.empty() &&
      (secret.size() < kSecretBytesMin || secret.size() > kSecretBytesMax)) {
    return Status::InvalidArgument(
        "the cluster secret has " + std::to_string(kSecretBytesMin) + " to " +
        std::to_string(kSecretBytesMax) + " bytes, not " +
        std::to_string(secret.size()));
  }
  return Status::Ok();
}

}  // namespace kvs::channel
