// The checkpoint image: the allocator bitmap and the catalog as of one
// generation, written to fresh segments and published by the superblock
// (which holds its length and checksum).
//
// Encoding:
//
// clang-format off
// | field       | encoding                                                   |
// |-------------|------------------------------------------------------------|
// | magic       | 8 bytes "KVSCKPT2" (volume format 1: "KVSCKPT1")           |
// | generation  | fixed64                                                    |
// | allocated   | varint capacity (segments), then fixed64 bitmap words      |
// | catalog     | varint count, then (key, value), each length-prefixed      |
// | shares      | varint count, then (varint segment, varint references - 1) |
// |             | in segment order, for the segments with more than one      |
// |             | reference (absent in "KVSCKPT1": none)                     |
// clang-format on

#ifndef KVS_ALLOC_CHECKPOINT_H_
#define KVS_ALLOC_CHECKPOINT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "alloc/segment_bitmap.h"
#include "alloc/superblock.h"
#include "util/status.h"

namespace kvs::alloc {

struct CheckpointImage {
  uint64_t generation = 0;
  SegmentBitmap allocated;
  std::map<std::string, std::string, std::less<>> catalog;
  // Allocated segments with more than one reference: the references beyond
  // the first (MetadataBatch::Share).
  std::map<uint64_t, uint64_t> shares;
};

std::string EncodeCheckpoint(const CheckpointImage& image);
// Reads formats 2 and 1. Corruption on any malformed or trailing byte, and
// on shares of segments not allocated.
Status DecodeCheckpoint(std::string_view blob, CheckpointImage* image);

// A random identifier for a new volume.
VolumeId RandomVolumeId();

}  // namespace kvs::alloc

#endif  // KVS_ALLOC_CHECKPOINT_H_
