#include "alloc/checkpoint.h"

#include <cstring>
#include <random>

#include "util/coding.h"

namespace kvs::alloc {
namespace {

constexpr char kMagic[8] = {'K', 'V', 'S', 'C', 'K', 'P', 'T', '1'};

}  // namespace

std::string EncodeCheckpoint(const CheckpointImage& image) {
  std::string out(kMagic, sizeof(kMagic));
  coding::PutFixed64(&out, image.generation);
  image.allocated.EncodeTo(&out);
  coding::PutVarint64(&out, image.catalog.size());
  for (const auto& [key, value] : image.catalog) {
    coding::PutLengthPrefixed(&out, key);
    coding::PutLengthPrefixed(&out, value);
  }
  return out;
}

Status DecodeCheckpoint(std::string_view blob, CheckpointImage* image) {
  if (blob.size() < 16 || std::memcmp(blob.data(), kMagic, 8) != 0) {
    return Status::Corruption("checkpoint magic missing");
  }
  CheckpointImage result;
  result.generation = coding::DecodeFixed64(blob.data() + 8);
  std::string_view input = blob.substr(16);
  uint64_t count = 0;
  if (!result.allocated.DecodeFrom(&input) ||
      !coding::GetVarint64(&input, &count) || count > input.size()) {
    return Status::Corruption("malformed checkpoint");
  }
  for (uint64_t i = 0; i < count; ++i) {
    std::string_view key, value;
    if (!coding::GetLengthPrefixed(&input, &key) ||
        !coding::GetLengthPrefixed(&input, &value)) {
      return Status::Corruption("malformed checkpoint catalog");
    }
    result.catalog.emplace(std::string(key), std::string(value));
  }
  if (!input.empty()) {
    return Status::Corruption("trailing bytes after checkpoint");
  }
  *image = std::move(result);
  return Status::Ok();
}

VolumeId RandomVolumeId() {
  std::random_device device;
  VolumeId id;
  for (auto& byte : id) {
    byte = static_cast<uint8_t>(device());
  }
  return id;
}

}  // namespace kvs::alloc
