// The volume's redo log: an append-only chain of segments holding metadata
// batches, replayed on open on top of the last checkpoint.
//
// Every record starts at a 4 KiB block boundary and is written once, padded
// to whole blocks, then synced; a block holding an acknowledged record is
// never rewritten, so a torn write can only damage the newest, unacknowledged
// record. When a record does not fit, the writer reserves a new segment,
// writes its header block, and links it with a continue record.
//
// Segment header block (first 4 KiB of every redo segment):
//
// | offset | size | field        | meaning                               |
// |--------|------|--------------|---------------------------------------|
// | 0      | 8    | magic        | "KVSREDO1"                            |
// | 8      | 16   | volume_id    | the superblock's                      |
// | 24     | 8    | generation   | checkpoint generation of the chain    |
// | 32     | 8    | chain_index  | 0 for the first segment, then +1      |
// | 40     | 4    | crc          | masked CRC32C of bytes [0, 40)        |
//
// Record (at a block boundary, padded with zeros to whole blocks):
//
// | offset | size | field        | meaning                                  |
// |--------|------|--------------|------------------------------------------|
// | 0      | 4    | crc          | masked CRC32C of bytes [4, 32 + length)  |
// | 4      | 4    | length       | payload bytes                            |
// | 8      | 8    | generation   | must equal the chain's                   |
// | 16     | 8    | sequence     | consecutive from redo_first_sequence     |
// | 24     | 1    | type         | 1 = metadata batch, 2 = continue         |
// | 25     | 7    | zero         |                                          |
// | 32     | n    | payload      | batch encoding, or next segment (fixed64)|
//
// Replay stops at the first record that is missing or fails its checks. If a
// later block of the same segment holds a valid record of this generation
// with a higher sequence, the damage is in the middle of the log: that is
// Corruption, never silently truncated.

#ifndef KVS_ALLOC_REDO_LOG_H_
#define KVS_ALLOC_REDO_LOG_H_

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "alloc/metadata_batch.h"
#include "alloc/superblock.h"
#include "io/file.h"
#include "util/limits.h"
#include "util/status.h"

namespace kvs::alloc {

inline constexpr size_t kRedoRecordHeaderBytes = 32;
// A record must fit one segment after the header block, leaving one block
// for the continue record that may have to follow it.
inline constexpr size_t kRedoPayloadBytesMax =
    limits::segment_size_bytes - 3 * limits::io_alignment_bytes;

// Where the chain ends: the writer resumes here after replay.
struct RedoPosition {
  uint64_t segment = 0;
  uint64_t offset_in_segment = 0;
  uint64_t chain_index = 0;
  uint64_t next_sequence = 0;
};

// Appends records. Not thread-safe: the Volume serializes calls.
class RedoLogWriter {
 public:
  // Reserves a fresh segment for the chain (marks it in use); the writer
  // records it as allocated through the continue record.
  using ReserveSegment = std::function<Status(uint64_t* segment)>;
  // Returns a segment reserve_ gave that the chain will not use.
  using UnreserveSegment = std::function<void(uint64_t segment)>;

  RedoLogWriter(io::File* file, const VolumeId& volume_id, uint64_t generation,
                ReserveSegment reserve, UnreserveSegment unreserve)
      : file_(file),
        volume_id_(volume_id),
        generation_(generation),
        reserve_(std::move(reserve)),
        unreserve_(std::move(unreserve)) {}

  // Writes the header block of a chain's first segment (not synced).
  Status StartChain(uint64_t first_segment, uint64_t first_sequence);
  // Continues an existing chain at `position` (from ReplayRedoLog).
  void Resume(const RedoPosition& position) { position_ = position; }

  // Writes `batch` as one record and syncs. On success the batch is durable.
  // `linked_segment` is set to the new segment when the chain grew (the
  // caller marks it allocated) -- also when the batch itself then failed,
  // since the chain keeps the link -- else left unchanged.
  //
  // Errors: a NoSpace status (no segment for the chain, or a write refused
  // for lack of space) means the batch was not written and the writer may
  // be used again; any other error, a failed sync above all, leaves the
  // batch's durability unknown and the caller must stop using the chain.
  Status Append(const MetadataBatch& batch, uint64_t* linked_segment);

  const RedoPosition& position() const { return position_; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  Status WriteRecord(uint8_t type, std::string_view payload);

  io::File* const file_;
  const VolumeId volume_id_;
  const uint64_t generation_;
  const ReserveSegment reserve_;
  const UnreserveSegment unreserve_;
  RedoPosition position_;
  uint64_t bytes_written_ = 0;
};

struct RedoReplay {
  RedoPosition end;                // where the writer resumes
  std::vector<uint64_t> segments;  // the chain, in order
  uint64_t batches = 0;            // batches replayed
};

// Replays the chain that `superblock` points at, calling `apply` with each
// batch in order. Stops at the tail; Corruption for damage before it.
Status ReplayRedoLog(io::File* file, const Superblock& superblock,
                     const std::function<Status(const MetadataBatch&)>& apply,
                     RedoReplay* replay);

}  // namespace kvs::alloc

#endif  // KVS_ALLOC_REDO_LOG_H_
