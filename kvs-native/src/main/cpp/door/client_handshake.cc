#include "door/client_handshake.h"

#include "util/coding.h"
#include "util/crc32c.h"

namespace kvs::door {
namespace {

constexpr uint32_t kHelloMagic = 0x41535654;      // "KVSA" little-endian
constexpr uint32_t kAdmissionMagic = 0x4b535654;  // "KVSK" little-endian
constexpr uint8_t kVersion = 1;

void Seal(std::string* out) {
  coding::PutFixed32(out, crc32c::Value(out->data(), out->size()));
}

Status Checked(std::string_view body, uint32_t magic, const char* what) {
  if (coding::DecodeFixed32(body.data()) != magic) {
    return Status::InvalidArgument(std::string("handshake: not a ") + what +
                                   " (not a KVS client?)");
  }
  if (static_cast<uint8_t>(body[4]) != kVersion) {
    return Status::InvalidArgument(
        std::string("handshake: a ") + what + " of version " +
        std::to_string(static_cast<uint8_t>(body[4])) +
        "; this port speaks version " + std::to_string(kVersion) +
        " (client and server run different releases)");
  }
  const size_t sealed = body.size() - 4;
  if (crc32c::Value(body.data(), sealed) !=
      coding::DecodeFixed32(body.data() + sealed)) {
    return Status::InvalidArgument(std::string("handshake: the ") + what +
                                   " fails its checksum");
  }
  return Status::Ok();
}

}  // namespace

Status DecodeHello(std::string_view body, Hello* hello) {
  if (body.size() != kHelloBytes) {
    return Status::InvalidArgument(
        "handshake: a message of " + std::to_string(body.size()) +
        " bytes, not a Hello's " + std::to_string(kHelloBytes));
  }
  if (Status checked = Checked(body, kHelloMagic, "Hello"); !checked.ok()) {
    return checked;
  }
  if (body[5] != 0 || body[6] != 0 || body[7] != 0) {
    return Status::InvalidArgument("handshake: a Hello with unknown fields");
  }
  hello->nonce = std::string(body.substr(8, channel::kNonceBytes));
  hello->proof =
      std::string(body.substr(8 + channel::kNonceBytes, channel::kProofBytes));
  return Status::Ok();
}

std::string EncodeHello(const Hello& hello) {
  std::string out;
  coding::PutFixed32(&out, kHelloMagic);
  out.push_back(static_cast<char>(kVersion));
  out.append(3, '\0');
  out += hello.nonce;
  out += hello.proof;
  Seal(&out);
  return out;
}

std::string EncodeAdmission(uint8_t status, std::string_view message,
                            std::string_view proof) {
  message = message.substr(0, kAdmissionMessageMax);
  std::string out;
  coding::PutFixed32(&out, kAdmissionMagic);
  out.push_back(static_cast<char>(kVersion));
  out.push_back(static_cast<char>(status));
  coding::PutFixed16(&out, static_cast<uint16_t>(message.size()));
  out += message;
  out += proof;
  Seal(&out);
  return out;
}

Status DecodeAdmission(std::string_view body, uint8_t* status,
                       std::string* message, std::string* proof) {
  if (body.size() < 8 + channel::kProofBytes + 4) {
    return Status::InvalidArgument("handshake: a short Admission");
  }
  const size_t size = coding::DecodeFixed16(body.data() + 6);
  if (size > kAdmissionMessageMax ||
      body.size() != 8 + size + channel::kProofBytes + 4) {
    return Status::InvalidArgument("handshake: an Admission of " +
                                   std::to_string(body.size()) + " bytes");
  }
  if (Status checked = Checked(body, kAdmissionMagic, "Admission");
      !checked.ok()) {
    return checked;
  }
  *status = static_cast<uint8_t>(body[5]);
  *message = std::string(body.substr(8, size));
  *proof = std::string(body.substr(8 + size, channel::kProofBytes));
  return Status::Ok();
}

}  // namespace kvs::door
