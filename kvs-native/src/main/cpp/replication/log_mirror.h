// LogMirror: a backup's copy of one of a primary region's logs (small or
// large), segment by segment, byte for byte (Tebis §3.2: flush-tail).
//
// The primary writes a log segment's bytes into a backup buffer at their
// own offsets (LogIdentity::on_append); when the segment is sealed (or a
// partial tail must be durable: the stream closes, or an index shipped next
// may point into it), the backup persists the buffer here:
// into a segment of its own, synced, and then the log map entry naming it,
// committed in the same metadata batch as the segment's allocation. A
// primary device offset translates to the backup's copy by replacing the
// segment number (the offset in the segment is the same), which is how
// Send-Index rewrites value pointers in shipped index segments.
//
// Catalog, per entry ("r/<region>/logmap/<kind>/<primary segment, %016x>"):
//
// | field          | encoding |
// |----------------|----------|
// | backup segment | fixed64  |
// | chain index    | fixed64  |
// | bytes          | fixed32: how much of the segment the copy holds |
// | sealed         | u8: 1 if the primary had finished the segment |
// | walk (sealed copies only; older entries lack it) | end fixed32 (just past
// the last record that checks out), ended u8 (that record is the end record),
// put bytes fixed64, last LSN fixed64 |
//
// A sealed copy's walk is taken when it is persisted, from the bytes in
// memory, so that a promotion need not read the copy back to find it
// (replica_chain.h): it reads only the tails.
//
// Errors: a failed write or commit leaves the map as it was (the reserved
// segment is returned); the volume's errors are sticky.
//
// Thread safety: all methods may be called concurrently.

#ifndef KVS_REPLICATION_LOG_MIRROR_H_
#define KVS_REPLICATION_LOG_MIRROR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "alloc/volume.h"
#include "log/log_format.h"
#include "util/status.h"

namespace kvs::replication {

// What walking a sealed copy found (replica_chain.h, SegmentWalk).
struct CopyWalk {
  uint32_t end = 0;
  bool ended = false;
  uint64_t put_bytes = 0;
  uint64_t max_lsn = 0;
};

struct MirroredSegment {
  uint64_t backup_segment = 0;
  uint64_t chain_index = 0;
  uint32_t bytes = 0;
  bool sealed = false;
  std::optional<CopyWalk> walk;  // sealed copies persisted since it exists
};

class LogMirror {
 public:
  // Loads the map of `region_id`'s `kind` log from `volume` (not owned).
  static Status Open(alloc::Volume* volume, uint64_t region_id,
                     log::LogKind kind, std::unique_ptr<LogMirror>* mirror);
  LogMirror(const LogMirror&) = delete;
  LogMirror& operator=(const LogMirror&) = delete;

  // Persists `bytes` (the first bytes.size() bytes of the primary's
  // `primary_segment`, chain index `chain_index`) as its copy. A copy that
  // exists already (a partial tail persisted before) is extended in place,
  // in the same backup segment, so pointers translated into it stay valid.
  // Durable on return. InvalidArgument for more than a segment, or for
  // less than an existing copy holds.
  Status Persist(uint64_t primary_segment, uint64_t chain_index,
                 std::string_view bytes, bool sealed);

  // The backup's offset of the byte at `primary_offset`; NotFound for a
  // segment not mirrored, OutOfRange-like InvalidArgument past its copy.
  Status Translate(uint64_t primary_offset, uint64_t* backup_offset) const;

  // Frees the copies of `primary_segments` whatever they hold (the primary
  // reuses them: the first bytes of a new segment arrived); unknown
  // segments are ignored.
  Status Trim(const std::vector<uint64_t>& primary_segments);
  // Frees the copies of the primary's freed segments (its GC): only a copy
  // still of the chain position named, so a TRIM that arrives after the
  // segment was reused never removes the newer copy.
  struct FreedSegment {
    uint64_t primary_segment = 0;
    uint64_t chain_index = 0;
  };
  Status TrimFreed(const std::vector<FreedSegment>& freed);

  // Frees every copy (the primary ships its whole state again).
  Status Clear();

  // Every copy, by primary segment.
  std::map<uint64_t, MirroredSegment> segments() const;

 private:
  LogMirror(alloc::Volume* volume, std::string prefix);
  std::string Key(uint64_t primary_segment) const;
  // Frees the copies named; with `match_chain` only those still of the
  // chain index named.
  Status TrimMatching(const std::vector<FreedSegment>& freed, bool match_chain);

  alloc::Volume* const volume_;
  const std::string prefix_;
  mutable std::mutex mutex_;
  std::map<uint64_t, MirroredSegment> segments_;
};

// The catalog prefix of a region's log map for `kind`.
std::string LogMapPrefix(uint64_t region_id, log::LogKind kind);
// A log map entry's fields; false if malformed.
bool DecodeLogMapEntry(std::string_view entry, MirroredSegment* segment);

}  // namespace kvs::replication

#endif  // KVS_REPLICATION_LOG_MIRROR_H_
