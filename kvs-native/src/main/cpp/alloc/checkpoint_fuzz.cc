// libFuzzer target for DecodeCheckpoint, the parser of the checkpoint blob
// (allocator bitmap and catalog) that Volume::Open loads from the device.
//
// Checked: no crash or sanitizer report on any input, and no allocation
// beyond what the input can describe; a decoded image is consistent (no
// bit set beyond the bitmap's capacity, count equal to the bits set) and
// re-encodes into a blob that decodes to the same image, no longer than the
// input, and stable under a second round trip.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "alloc/checkpoint.h"
#include "util/check.h"

namespace {

using kvs::alloc::CheckpointImage;

bool SameImage(const CheckpointImage& a, const CheckpointImage& b) {
  return a.generation == b.generation && a.allocated == b.allocated &&
         a.allocated.count() == b.allocated.count() && a.catalog == b.catalog &&
         a.shares == b.shares;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view blob(reinterpret_cast<const char*>(data), size);
  CheckpointImage image;
  if (!kvs::alloc::DecodeCheckpoint(blob, &image).ok()) {
    return 0;
  }
  const kvs::alloc::SegmentBitmap& allocated = image.allocated;
  uint64_t count = 0;
  // Bounded by the input: every 64 segments of capacity took 8 bytes.
  for (uint64_t segment = 0; segment < allocated.capacity(); ++segment) {
    count += allocated.Contains(segment) ? 1 : 0;
  }
  KVS_CHECK_MSG(count == allocated.count(), "bitmap count is wrong");
  KVS_CHECK(!allocated.Contains(allocated.capacity()));

  const std::string encoded = kvs::alloc::EncodeCheckpoint(image);
  for (const auto& [segment, extra] : image.shares) {
    KVS_CHECK_MSG(allocated.Contains(segment) && extra > 0,
                  "a share of a segment not allocated");
  }
  // A format-1 blob gains the (empty) shares section: one byte.
  KVS_CHECK_MSG(encoded.size() <= blob.size() + 1, "re-encoding grew the blob");
  CheckpointImage again;
  KVS_CHECK_MSG(kvs::alloc::DecodeCheckpoint(encoded, &again).ok(),
                "an encoded checkpoint does not decode");
  KVS_CHECK_MSG(SameImage(image, again), "round trip changed the image");
  KVS_CHECK_MSG(kvs::alloc::EncodeCheckpoint(again) == encoded,
                "encoding is not stable");
  return 0;
}
