// The volume superblock: where a volume's durable metadata starts.
//
// Two copies live at device offsets 0 and 4096 and are written alternately
// (copy = sequence % 2), each as one 4 KiB block with its own checksum, so a
// torn superblock write leaves the other copy intact. Open takes the valid
// copy with the higher sequence. Segment 0 holds nothing else.
//
// Format, little-endian, 4096 bytes:
//
// clang-format off
// | offset | size | field                    | meaning                                        |
// |--------|------|--------------------------|------------------------------------------------|
// | 0      | 8    | magic                    | "KVSVOLUM"                                     |
// | 8      | 4    | format_version           | 7 (6: no atomic batches in log records; 5: no write ids in log records; 4: no shared write-ahead log; 3: no split region; 2: no draining level; 1: no reference counts)|
// | 12     | 4    | segment_offset_bits      | 21 (2 MiB segments)                            |
// | 16     | 8    | sequence                 | +1 per superblock write; higher wins           |
// | 24     | 16   | volume_id                | random at creation; stamps redo segments       |
// | 40     | 8    | generation               | checkpoint generation; redo records carry it   |
// | 48     | 8    | checkpoint_bytes         | length of the checkpoint blob                  |
// | 56     | 4    | checkpoint_crc           | masked CRC32C of the blob                      |
// | 60     | 4    | checkpoint_segment_count | n <= kCheckpointSegmentsMax                    |
// | 64     | 8    | redo_first_segment       | first segment of this generation's redo        |
// | 72     | 8    | redo_first_sequence      | sequence of the first redo batch               |
// | 80     | 8*n  | checkpoint_segments      | segments holding the blob, in order            |
// | ...    |      | zero                     |                                                |
// | 4092   | 4    | crc                      | masked CRC32C of bytes [0, 4092)               |
// clang-format on

#ifndef KVS_ALLOC_SUPERBLOCK_H_
#define KVS_ALLOC_SUPERBLOCK_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace kvs::alloc {

inline constexpr size_t kSuperblockBytes = 4096;
inline constexpr uint64_t kSuperblockOffsets[2] = {0, kSuperblockBytes};
// The volume format this build writes. 2: segments carry reference counts
// (checkpoint "KVSCKPT2" with a shares section, redo batches with shares);
// 3: a region's catalog may hold a draining level (lsm::Region); 4: a
// region may be split from another (its origin entry: bounds and
// ancestors, lsm/key_bounds.h; segments shared with its sibling), which a
// build that ignores the bounds would serve wrongly; 5: a daughter's small
// (write-ahead) log may begin with its parent's segments, whose headers
// name the parent -- a format-4 build takes such a last segment for one
// committed and never written, and would drop the writes in it. Volumes of
// versions 1 to 4 are read and upgraded on open (two checkpoints in format
// 5).
inline constexpr uint32_t kSuperblockFormatVersion = 7;
inline constexpr uint32_t kSuperblockOldestReadableVersion = 1;
// 500 segments of 2 MiB: a checkpoint of up to 1000 MiB, enough for the
// allocator bitmap and catalog of a multi-terabyte volume.
inline constexpr uint32_t kCheckpointSegmentsMax = 500;
static_assert(80 + 8 * kCheckpointSegmentsMax <= kSuperblockBytes - 4);

using VolumeId = std::array<uint8_t, 16>;

struct Superblock {
  // The format of the volume's metadata (checkpoint and redo records).
  uint32_t format_version = kSuperblockFormatVersion;
  uint64_t sequence = 0;
  VolumeId volume_id{};
  uint64_t generation = 0;
  uint64_t checkpoint_bytes = 0;
  uint32_t checkpoint_crc = 0;
  std::vector<uint64_t> checkpoint_segments;
  uint64_t redo_first_segment = 0;
  uint64_t redo_first_sequence = 0;

  // Serializes into exactly kSuperblockBytes bytes.
  std::string Encode() const;
  // Parses one copy. NotFound if the block does not start with the magic
  // (not a KVS volume, or never written); InvalidArgument for a format
  // version this build does not read (a newer KVS wrote it); Corruption for
  // any other defect.
  static Status Decode(std::string_view block, Superblock* superblock);
};

}  // namespace kvs::alloc

#endif  // KVS_ALLOC_SUPERBLOCK_H_
