#include "alloc/superblock.h"

#include <cstring>

#include "util/check.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/limits.h"

namespace kvs::alloc {
namespace {

constexpr char kMagic[8] = {'K', 'V', 'S', 'V', 'O', 'L', 'U', 'M'};
constexpr size_t kCrcOffset = kSuperblockBytes - 4;
constexpr size_t kSegmentListOffset = 80;

}  // namespace

std::string Superblock::Encode() const {
  KVS_CHECK(checkpoint_segments.size() <= kCheckpointSegmentsMax);
  std::string block(kSuperblockBytes, '\0');
  char* p = block.data();
  std::memcpy(p, kMagic, sizeof(kMagic));
  coding::EncodeFixed32(p + 8, format_version);
  coding::EncodeFixed32(p + 12, limits::segment_offset_bits);
  coding::EncodeFixed64(p + 16, sequence);
  std::memcpy(p + 24, volume_id.data(), volume_id.size());
  coding::EncodeFixed64(p + 40, generation);
  coding::EncodeFixed64(p + 48, checkpoint_bytes);
  coding::EncodeFixed32(p + 56, checkpoint_crc);
  coding::EncodeFixed32(p + 60,
                        static_cast<uint32_t>(checkpoint_segments.size()));
  coding::EncodeFixed64(p + 64, redo_first_segment);
  coding::EncodeFixed64(p + 72, redo_first_sequence);
  for (size_t i = 0; i < checkpoint_segments.size(); ++i) {
    coding::EncodeFixed64(p + kSegmentListOffset + 8 * i,
                          checkpoint_segments[i]);
  }
  coding::EncodeFixed32(p + kCrcOffset,
                        crc32c::Mask(crc32c::Value(p, kCrcOffset)));
  return block;
}

Status Superblock::Decode(std::string_view block, Superblock* superblock) {
  if (block.size() != kSuperblockBytes) {
    return Status::Corruption("superblock has " + std::to_string(block.size()) +
                              " bytes, expected 4096");
  }
  const char* p = block.data();
  if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0) {
    return Status::NotFound("no KVS superblock (magic missing)");
  }
  const uint32_t stored_crc =
      crc32c::Unmask(coding::DecodeFixed32(p + kCrcOffset));
  if (crc32c::Value(p, kCrcOffset) != stored_crc) {
    return Status::Corruption("superblock checksum mismatch");
  }
  const uint32_t version = coding::DecodeFixed32(p + 8);
  if (version < kSuperblockOldestReadableVersion ||
      version > kSuperblockFormatVersion) {
    return Status::InvalidArgument(
        "volume format version " + std::to_string(version) +
        " is not one this build reads (" +
        std::to_string(kSuperblockOldestReadableVersion) + " to " +
        std::to_string(kSuperblockFormatVersion) + ")" +
        (version > kSuperblockFormatVersion
             ? ": a newer KVS wrote it; open it with that version"
             : ""));
  }
  const uint32_t offset_bits = coding::DecodeFixed32(p + 12);
  if (offset_bits != limits::segment_offset_bits) {
    return Status::Corruption("volume uses 2^" + std::to_string(offset_bits) +
                              " byte segments; this build uses 2^21");
  }
  const uint32_t segment_count = coding::DecodeFixed32(p + 60);
  if (segment_count > kCheckpointSegmentsMax) {
    return Status::Corruption("superblock lists " +
                              std::to_string(segment_count) +
                              " checkpoint segments");
  }
  Superblock result;
  result.format_version = version;
  result.sequence = coding::DecodeFixed64(p + 16);
  std::memcpy(result.volume_id.data(), p + 24, result.volume_id.size());
  result.generation = coding::DecodeFixed64(p + 40);
  result.checkpoint_bytes = coding::DecodeFixed64(p + 48);
  result.checkpoint_crc = coding::DecodeFixed32(p + 56);
  result.redo_first_segment = coding::DecodeFixed64(p + 64);
  result.redo_first_sequence = coding::DecodeFixed64(p + 72);
  for (uint32_t i = 0; i < segment_count; ++i) {
    result.checkpoint_segments.push_back(
        coding::DecodeFixed64(p + kSegmentListOffset + 8 * i));
  }
  if (result.checkpoint_bytes >
      uint64_t{segment_count} * limits::segment_size_bytes) {
    return Status::Corruption("checkpoint larger than its segments");
  }
  *superblock = std::move(result);
  return Status::Ok();
}

}  // namespace kvs::alloc
