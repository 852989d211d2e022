// libFuzzer target for Superblock::Decode, the parser of the two 4 KiB
// superblock copies at the start of a volume. An input of exactly one block
// is tried as given and once more with the right checksum, so that the
// fuzzer also reaches the field checks behind the checksum.
//
// Checked: no crash or sanitizer report on any input; a missing magic is
// NotFound and every other rejection Corruption (Volume::Open tells "not a
// volume" from "damaged volume" by this); a decoded superblock respects the
// limits Decode promises, and re-encodes to the same fields and to the same
// bytes as far as the format defines them (up to the end of the segment
// list, plus the checksum).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "alloc/superblock.h"
#include "util/check.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/limits.h"

namespace {

using kvs::alloc::kSuperblockBytes;
using kvs::alloc::Superblock;

constexpr size_t kCrcOffset = kSuperblockBytes - 4;
constexpr size_t kSegmentListOffset = 80;

bool SameFields(const Superblock& a, const Superblock& b) {
  return a.format_version == b.format_version && a.sequence == b.sequence &&
         a.volume_id == b.volume_id && a.generation == b.generation &&
         a.checkpoint_bytes == b.checkpoint_bytes &&
         a.checkpoint_crc == b.checkpoint_crc &&
         a.checkpoint_segments == b.checkpoint_segments &&
         a.redo_first_segment == b.redo_first_segment &&
         a.redo_first_sequence == b.redo_first_sequence;
}

void DecodeAndCheck(std::string_view block) {
  Superblock superblock;
  const kvs::Status status = Superblock::Decode(block, &superblock);
  if (!status.ok()) {
    const bool magic_missing = block.size() == kSuperblockBytes &&
                               std::memcmp(block.data(), "KVSVOLUM", 8) != 0;
    // InvalidArgument only for a format version this build does not read.
    const bool valid_otherwise =
        status.code() == kvs::Status::Code::kInvalidArgument;
    KVS_CHECK_MSG(magic_missing ? status.IsNotFound()
                                : status.IsCorruption() || valid_otherwise,
                  "a rejected superblock must be NotFound, Corruption or an "
                  "unsupported version");
    return;
  }
  const size_t segment_count = superblock.checkpoint_segments.size();
  KVS_CHECK(segment_count <= kvs::alloc::kCheckpointSegmentsMax);
  KVS_CHECK(superblock.checkpoint_bytes <=
            segment_count * kvs::limits::segment_size_bytes);

  const std::string encoded = superblock.Encode();
  KVS_CHECK(encoded.size() == kSuperblockBytes);
  const size_t defined_bytes = kSegmentListOffset + 8 * segment_count;
  KVS_CHECK_MSG(encoded.compare(0, defined_bytes, block, 0, defined_bytes) == 0,
                "re-encoding changed a defined byte");
  Superblock again;
  KVS_CHECK_MSG(Superblock::Decode(encoded, &again).ok(),
                "an encoded superblock does not decode");
  KVS_CHECK_MSG(SameFields(superblock, again), "round trip changed a field");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view block(reinterpret_cast<const char*>(data), size);
  DecodeAndCheck(block);
  if (size == kSuperblockBytes) {
    std::string resealed(block);
    kvs::coding::EncodeFixed32(
        resealed.data() + kCrcOffset,
        kvs::crc32c::Mask(kvs::crc32c::Value(resealed.data(), kCrcOffset)));
    DecodeAndCheck(resealed);
  }
  return 0;
}
