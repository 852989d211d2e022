#include "alloc/checkpoint.h"

#include <cstring>
#include <random>

#include "util/coding.h"

namespace kvs::alloc {
namespace {

constexpr char kMagic[8] = {'K', 'V', 'S', 'C', 'K', 'P', 'T', '2'};
// Volume format 1: no shares section.
constexpr char kMagicV1[8] = {'K', 'V', 'S', 'C', 'K', 'P', 'T', '1'};

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
  coding::PutVarint64(&out, image.shares.size());
  for (const auto& [segment, extra] : image.shares) {
    coding::PutVarint64(&out, segment);
    coding::PutVarint64(&out, extra);
  }
  return out;
}

Status DecodeCheckpoint(std::string_view blob, CheckpointImage* image) {
  const bool v1 =
      blob.size() >= 16 && std::memcmp(blob.data(), kMagicV1, 8) == 0;
  if (blob.size() < 16 || (!v1 && std::memcmp(blob.data(), kMagic, 8) != 0)) {
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
  if (!v1) {
    if (!coding::GetVarint64(&input, &count) || count > input.size()) {
      return Status::Corruption("malformed checkpoint shares");
    }
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t segment = 0, extra = 0;
      if (!coding::GetVarint64(&input, &segment) ||
          !coding::GetVarint64(&input, &extra) || extra == 0 ||
          segment >= result.allocated.capacity() ||
          !result.allocated.Contains(segment) ||
          !result.shares.emplace(segment, extra).second) {
        return Status::Corruption(
            "checkpoint shares a segment that is not allocated, twice, or "
            "with no reference");
      }
    }
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
