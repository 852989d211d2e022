// ReplicaChain: which bytes make up each position of a Send-Index backup's
// copy of a primary's small or large log, as a promotion takes them
// (replica_adoption.h). Shared by adoption, which makes those bytes the
// region's own logs, and by the replica digest (replica_digest.h), which
// reads what a promotion would serve without changing anything: both see
// the same log.
//
// A chain position has up to two candidates: its persisted copy
// (LogMirror) and what landed in one of the stream's log buffers since that
// buffer's last FLUSH-TAIL. The buffer's bytes are taken where the position
// has no copy, where they hold more records that check out, or where the
// copy is of another use of the segment (another nonce). The log is then
// kept up to the first position whose best bytes do not end with an end
// record (its tail); later positions were never acknowledged (a write is
// acknowledged only with every log byte before it, end records included),
// and so are positions whose bytes hold no valid header of that position.
//
// Thread safety: pure functions of their arguments and the device.

#ifndef KVS_REPLICATION_REPLICA_CHAIN_H_
#define KVS_REPLICATION_REPLICA_CHAIN_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/file.h"
#include "log/log_format.h"
#include "replication/log_mirror.h"
#include "util/status.h"

namespace kvs::replication {

// A log buffer's contents as they landed (a segment from its offset 0).
struct LandedLog {
  log::LogKind kind = log::LogKind::kSmall;
  std::string_view bytes;
};

// What the records of one segment's bytes say.
struct SegmentWalk {
  bool header_valid = false;
  log::SegmentHeader header;
  size_t end = 0;      // just past the last record that checks out
  bool ended = false;  // that record is the segment's end record
  uint64_t put_bytes = 0;
  uint64_t max_lsn = 0;  // of its puts and deletes
};

// Walks `bytes` (a log segment from its offset 0) record by record, up to
// the first record that does not check out or the end record.
SegmentWalk WalkSegment(std::string_view bytes);

// One position of a replica's log chain and where its best bytes are.
struct ChainPosition {
  std::optional<uint64_t> primary_segment;  // its copy's primary segment
  std::optional<MirroredSegment> copy;      // its persisted copy, if any
  // The landed buffer (index into the `landed` given) whose bytes are
  // best, if one is; else the copy's are.
  std::optional<size_t> buffer;
  SegmentWalk walk;  // of the best bytes
  // Kept by a promotion; `tail`: kept, and the log's last position.
  bool kept = false;
  bool tail = false;
};

// `kind`'s chain (small or large) by chain index, from its persisted
// `copies` (by primary segment; each read from `file` once, one at a time,
// to walk it) and the `landed` buffers (those of other kinds are ignored).
// Corruption for two copies of one chain position.
Status PlanReplicaChain(io::File* file, log::LogKind kind,
                        const std::map<uint64_t, MirroredSegment>& copies,
                        const std::vector<LandedLog>& landed,
                        std::map<uint64_t, ChainPosition>* chain);

// The best bytes of `position` of a chain PlanReplicaChain made from
// `landed`, up to `position.walk.end` (read from its copy on `file`, or
// taken from its buffer).
Status ReadChainPosition(io::File* file, const ChainPosition& position,
                         const std::vector<LandedLog>& landed,
                         std::string* bytes);

}  // namespace kvs::replication

#endif  // KVS_REPLICATION_REPLICA_CHAIN_H_
