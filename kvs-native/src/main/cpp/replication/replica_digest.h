// The digest of what a Send-Index backup would serve if it were promoted
// now (contents_digest.h), computed without changing anything: from a
// snapshot of its replica, the log chains a promotion would adopt
// (replica_chain.h) are replayed as recovery replays a region's logs --
// every put and delete past the levels' compacted LSN, in LSN order, to the
// first LSN missing from both logs (lsm/region.h) -- and merged over the
// installed levels, newest first.
//
// Thread safety: DigestReplica reads only the snapshot and the device; the
// stream may go on meanwhile (the snapshot's segments are pinned).

#ifndef KVS_REPLICATION_REPLICA_DIGEST_H_
#define KVS_REPLICATION_REPLICA_DIGEST_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "alloc/volume.h"
#include "lsm/level.h"
#include "replication/contents_digest.h"
#include "replication/log_mirror.h"
#include "replication/replica_chain.h"
#include "util/status.h"

namespace kvs::replication {

// A backup's replica of one region at one moment (SendIndexSink::Snapshot):
// the installed levels (backup offsets) and their compacted LSN, the copies
// of the primary's small and large logs, and a copy of what had landed in
// those logs' buffers. Every segment it names stays pinned on the volume
// while it lives (alloc::Volume::Pin): the stream may free them meanwhile,
// but nothing reuses them, so reading them yields what they held.
class ReplicaSnapshot {
 public:
  ReplicaSnapshot() = default;
  ~ReplicaSnapshot();
  ReplicaSnapshot(const ReplicaSnapshot&) = delete;
  ReplicaSnapshot& operator=(const ReplicaSnapshot&) = delete;

  // Pins `segments` of `volume` (not owned; it must outlive the snapshot)
  // until the snapshot goes. Once.
  void Pin(alloc::Volume* volume, std::vector<uint64_t> segments);
  // Keeps a copy of a landed buffer's bytes.
  void AddLanded(log::LogKind kind, std::string_view bytes);

  alloc::Volume* volume() const { return volume_; }
  const std::vector<LandedLog>& landed() const { return landed_; }

  std::map<size_t, lsm::LevelDescriptor> levels;
  uint64_t compacted_lsn = 0;
  std::map<uint64_t, MirroredSegment> small_copies;
  std::map<uint64_t, MirroredSegment> large_copies;

 private:
  alloc::Volume* volume_ = nullptr;
  std::vector<uint64_t> pinned_;
  // The landed bytes (owned) and views of them.
  std::vector<std::unique_ptr<std::string>> landed_bytes_;
  std::vector<LandedLog> landed_;
};

// What `replica` would serve if promoted, as above, within `bounds` (the
// region's key range: a split region's levels hold its sibling's keys too).
// Corruption if an LSN appears twice in its logs (as recovery would refuse
// it); BUSY if the records past its levels hold more than
// limits::replica_digest_records_bytes_max.
Status DigestReplica(const ReplicaSnapshot& replica,
                     const lsm::KeyBounds& bounds, ContentsDigest* digest);

}  // namespace kvs::replication

#endif  // KVS_REPLICATION_REPLICA_DIGEST_H_
