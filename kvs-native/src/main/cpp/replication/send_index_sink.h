// SendIndexSink: a backup's end of one region's Send-Index stream (Tebis
// §3.2-3.3).
//
// On OPEN it registers seven replica buffers on the connection the OPEN
// came on: two per log (small, large, medium; the primary fills one with a
// segment's bytes at their own offsets while the other is persisted) and
// one for index segments. The backup's CPU takes no part in the one-sided
// writes; the control messages (send_index_format.h) drive it:
//
// - FLUSH-TAIL persists a log buffer's bytes as the copy of a primary
//   segment (LogMirror); a sealed segment's buffer is zeroed for the next.
//   Before a primary segment's first copy, copies of that segment in any of
//   the region's logs are trimmed: the primary freed and reused it.
// - SHIP-SEGMENT hands the index buffer to the IndexInstaller (pointer
//   rewriting), INSTALL-LEVEL installs the level (and drops the copies of
//   medium segments no level holds any more: the primary freed them), TRIM
//   drops the copies of log segments the primary freed.
//
// A new stream starts from what the backup holds of the same lineage of the
// primary's region (lsm::Region::incarnation, recorded in the replica
// marker, replica_adoption.h): its copies and installed levels are kept and
// reported (the OPEN reply), and the primary's catch-up sends only what the
// backup lacks, then drops (TRIM, empty INSTALL-LEVEL) what it no longer
// has. Of another lineage (a promotion happened meanwhile), or none, Create
// forgets everything first and the catch-up ships the whole state. Either
// way a backup never keeps a half-installed level or a stale copy once
// caught up.
//
// Thread safety: all methods may be called concurrently (one at a time
// inside).

#ifndef KVS_REPLICATION_SEND_INDEX_SINK_H_
#define KVS_REPLICATION_SEND_INDEX_SINK_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "alloc/volume.h"
#include "channel/server.h"
#include "lsm/level.h"
#include "replication/index_installer.h"
#include "replication/log_mirror.h"
#include "replication/replica_adoption.h"
#include "replication/replica_digest.h"
#include "replication/replication_format.h"
#include "replication/send_index_format.h"
#include "util/status.h"

namespace kvs::replication {

// The buffers of a Send-Index stream, in the OPEN reply's order.
inline constexpr size_t kSendIndexLogs = 3;  // small, large, medium
inline constexpr size_t kSendIndexBuffers = kSendIndexLogs * 2 + 1;
inline constexpr size_t kIndexBuffer = kSendIndexLogs * 2;
// The buffer of `kind`'s log with parity `parity` (chain index % 2).
size_t LogBuffer(log::LogKind kind, size_t parity);

struct SendIndexSinkStats {
  uint64_t tails = 0;         // FLUSH-TAILs persisted
  uint64_t tail_bytes = 0;    // bytes persisted by them
  uint64_t segments = 0;      // index segments rewritten
  uint64_t levels = 0;        // levels installed
  uint64_t log_cpu_ns = 0;    // CPU spent persisting log copies
  uint64_t index_cpu_ns = 0;  // CPU spent rewriting and installing
};

class SendIndexSink {
 public:
  // Takes the connection's buffer set `tag` (the cluster region's id) of
  // `session` (used during the call only; channel::Session::ReplicaBuffers)
  // and opens the copies and levels of engine region `region_id` on
  // `volume` (not owned): kept if they are of lineage `incarnation` (not
  // 0), and then reported in `*held` (ControlReply's copies and levels),
  // else emptied.
  static Status Create(channel::Session* session, uint64_t tag,
                       alloc::Volume* volume, uint64_t region_id,
                       uint64_t incarnation,
                       std::unique_ptr<SendIndexSink>* sink,
                       ControlReply* held);
  SendIndexSink(const SendIndexSink&) = delete;
  SendIndexSink& operator=(const SendIndexSink&) = delete;

  std::vector<fabric::RemoteBuffer> buffers() const;
  Status Handle(const IndexControl& control);

  // Refuses every later message (the stream is over: its region is being
  // promoted).
  void Stop();
  // What the small and large logs' buffers hold as they landed (after
  // Stop: nothing changes them but a primary that no longer may write;
  // replica_adoption.h reads only records that check out). Valid while
  // the sink lives.
  std::vector<LandedLog> Landed() const;

  // The replica as a promotion would find it now, for its digest
  // (replica_digest.h): levels, compacted LSN, log copies and a copy of
  // what landed in the small and large logs' buffers, with every segment
  // they name pinned. Consistent: no message is handled meanwhile; writes
  // landing in the buffers during the copy may be caught half-way (their
  // records then fail their checks, as after a crash).
  void Snapshot(ReplicaSnapshot* snapshot) const;

  // The installed levels, in backup offsets (tests, verification).
  std::map<size_t, lsm::LevelDescriptor> levels() const;
  // The copies of the primary's `kind` log, by primary segment.
  std::map<uint64_t, MirroredSegment> copies(log::LogKind kind) const;
  SendIndexSinkStats stats() const;

 private:
  SendIndexSink() = default;
  Status FlushTail(const IndexControl& control);
  Status InstallLevel(const IndexControl& control);
  // Copies what `copy` holds before the block it ends in into `buffer`
  // (FlushTail, for a segment the buffer does not hold from its start:
  // whole_).
  Status FillFromCopy(const MirroredSegment& copy,
                      channel::ReplicaBuffer* buffer) const;
  LogMirror* Mirror(log::LogKind kind) const;

  mutable std::mutex mutex_;
  alloc::Volume* volume_ = nullptr;
  bool stopped_ = false;
  // Shared with the connection that owns them (channel::ReplicaBuffer).
  std::shared_ptr<channel::ReplicaBuffer> buffers_[kSendIndexBuffers];
  // Per log buffer, the segment (primary segment, chain index) it holds
  // from its first byte (FLUSH-TAIL: it started there, or FillFromCopy
  // filled it); none after it was zeroed.
  std::pair<uint64_t, uint64_t> whole_[kSendIndexBuffers] = {};
  std::unique_ptr<LogMirror> mirrors_[kSendIndexLogs];
  std::unique_ptr<IndexInstaller> installer_;
  SendIndexSinkStats stats_;
};

}  // namespace kvs::replication

#endif  // KVS_REPLICATION_SEND_INDEX_SINK_H_
