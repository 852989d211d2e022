// The checkpoint image: the allocator bitmap and the catalog as of one
// generation, written to fresh segments and published by the superblock
// (which holds its length and checksum).
//
// Encoding:
//
// | field       | encoding                                              |
// |-------------|-------------------------------------------------------|
// | magic       | 8 bytes "KVSCKPT1"                                    |
// | generation  | fixed64                                               |
// | allocated   | varint capacity (segments), then fixed64 bitmap words |
// | catalog     | varint count, then (key, value), each length-prefixed |

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
};

std::string EncodeCheckpoint(const CheckpointImage& image);
// Corruption on any malformed or trailing byte.
Status DecodeCheckpoint(std::string_view blob, CheckpointImage* image);

// A random identifier for a new volume.
VolumeId RandomVolumeId();

}  // namespace kvs::alloc

#endif  // KVS_ALLOC_CHECKPOINT_H_
