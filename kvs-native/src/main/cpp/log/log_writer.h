// LogWriter: appends records to one log of one region (write-ahead/small,
// large or medium), buffering them in a chunk and writing whole 4 KiB blocks
// with direct I/O.
//
// Durability: Append only buffers. Write() puts buffered bytes on the device;
// SyncTo(position) makes the log durable through `position` with a group
// fdatasync shared by every log on the volume. After a sync, the next record
// appended is preceded by a sync mark naming the durable position, which
// replay uses to tell a torn tail (truncate) from damage to synced records
// (Corruption).
//
// The last block of the device image is rewritten as the chunk grows; this
// relies on aligned 4 KiB writes being atomic (true of NVMe drives formatted
// with 4 KiB blocks and of file systems with 4 KiB blocks under direct I/O):
// either version of that block holds every record synced before.
//
// New segments are reserved from the volume and committed (with their
// catalog entry) before anything is written into them; a full segment ends
// with an end record. A log reopened after a crash ends its tail segment and
// continues in a fresh one at its first append, so no record beyond the
// recovered tail can ever be read again (opening writes nothing, so a
// region opens, and serves reads, on a full device).
//
// LSNs: a record's LSN is taken only once nothing can stop the record from
// entering the buffer, so a failed append never leaves a gap in the LSNs,
// which recovery would take for the point where the logs end.
//
// Locks: the log's state is under `mutex_`; putting bytes on the device is
// under `io_mutex_` (taken first), so writes of one log never overlap.
// Write and SyncTo (the flusher) copy the bytes to write under `mutex_` and
// write them outside it: an appender waits for them only when it has to
// write itself (a full chunk, a segment roll), never for a flush's pwrite
// (a shard thread appends; docs/ARCHITECTURE.md "Server threads").
//
// Errors: a full device (a NoSpace status: no segment to roll to, or a
// write refused) fails the call and changes nothing -- what was buffered
// stays buffered and the next call tries again. Any other I/O error makes
// the writer fail every later call (sticky): after a failed fdatasync the
// device state is unknown.
// Thread safety: all methods may be called concurrently.

#ifndef KVS_LOG_LOG_WRITER_H_
#define KVS_LOG_LOG_WRITER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "alloc/metadata_batch.h"
#include "alloc/volume.h"
#include "io/sync_group.h"
#include "io/zero_pages.h"
#include "log/log_format.h"

namespace kvs::log {

// A segment a log gave up (its release is in the caller's batch).
struct ReleasedSegment {
  uint64_t chain_index = 0;
  uint64_t segment = 0;
};

// What a segment held when the log moved on from it.
struct SealedSegment {
  uint64_t chain_index = 0;
  uint64_t segment = 0;
  uint64_t put_bytes = 0;  // bytes of its put records
  uint64_t max_lsn = 0;    // highest LSN of its records (0: none)
};

// Bytes a log put at an offset of one of its segments: a segment header,
// a record, a sync mark or an end record. Replaying them in order into a
// zeroed segment of the same size rebuilds the segment byte for byte.
struct AppendedBytes {
  uint64_t chain_index = 0;
  uint64_t segment = 0;
  uint64_t offset = 0;     // in the segment
  std::string_view bytes;  // valid during the call only
};

struct LogIdentity {
  uint64_t region_id = 0;
  LogKind kind = LogKind::kSmall;
  // Catalog keys of this log's segments start with this prefix.
  std::string catalog_prefix;
  // Called (under the log's lock) when a segment is sealed, with the batch
  // that commits the next segment, so the owner can record it atomically;
  // then `on_sealed` (below) once that batch is durable (the batch may fail,
  // for lack of space, and be built again at the next append). Neither may
  // take locks that are held while calling into the log.
  std::function<void(const SealedSegment&, alloc::MetadataBatch*)> on_seal;
  // Called (under the log's lock, so in log order) for every byte range
  // the log appends, before Append returns: what value-log replication
  // mirrors into a backup's segment. A segment is complete once bytes of
  // the next chain index arrive (its last range is its end record). Must
  // not call into the log.
  std::function<void(const AppendedBytes&)> on_append;
  std::function<void(const SealedSegment&)> on_sealed;
  // Regions whose segments this log may hold besides its own: a region
  // split from another (lsm/key_bounds.h) starts its large log with its
  // parent's segments, whose headers name the parent (or an ancestor).
  std::vector<uint64_t> ancestors;
};

// Where an existing log ends (from ReplayLog, or cut shorter by the
// region's point-in-time recovery).
struct LogTail {
  std::map<uint64_t, uint64_t> segments;  // chain index -> segment number
  // In the last segment: where the log ends (just past the end record if
  // it is ended).
  uint64_t end_offset_in_segment = 0;
  uint64_t nonce = 0;           // of the last segment
  bool ended = false;           // last segment has an end record
  bool header_valid = true;     // false: last segment committed, never written
  std::string partial_block;    // bytes [align_down(end), end) of the last one
  uint64_t last_put_bytes = 0;  // put records of the last segment
  uint64_t last_max_lsn = 0;    // and their highest LSN
  // Segments after the end that recovery dropped (chain index -> segment):
  // released, with `dropped_catalog_keys` deleted, by the batch that starts
  // the log's next segment, whose chain index follows all of them.
  std::map<uint64_t, uint64_t> dropped;
  std::vector<std::string> dropped_catalog_keys;
};

struct LogWriterOptions {
  // Bytes buffered before a write is issued: large enough for efficient
  // sequential writes (Parallax uses 256 KiB), small enough that 1,000
  // regions' buffers stay modest. Grows temporarily for a larger record.
  size_t chunk_bytes = 256 * 1024;
};

struct AppendResult {
  uint64_t lsn = 0;
  uint64_t device_offset = 0;  // where the record starts
  uint32_t size = 0;           // encoded record bytes
  uint64_t end_position = 0;   // log position after the record
};

struct LogWriterStats {
  uint64_t appended_bytes = 0;
  uint64_t written_bytes = 0;  // including rewritten partial blocks
  uint64_t segments = 0;
};

class LogWriter {
 public:
  // Opens a log for appending: a new one when `tail` is null (its first
  // segment is allocated at the first append), else the one `tail`
  // describes (its last segment is ended and a new one started).
  static Status Open(alloc::Volume* volume, io::SyncGroup* sync_group,
                     LogIdentity identity, const LogWriterOptions& options,
                     const LogTail* tail, std::unique_ptr<LogWriter>* writer);

  // Appends a put or delete. The LSN is taken from `lsn_source` (incremented
  // under this log's lock, so LSNs grow along the log) or, when it is null,
  // is `lsn`. Key and value must be within the documented limits. A
  // present `write_id` is kept with the record (log_format.h), and so is
  // `continues_batch` (an atomic batch goes on at the next LSN).
  Status Append(RecordType type, std::string_view key, std::string_view value,
                std::atomic<uint64_t>* lsn_source, uint64_t lsn,
                AppendResult* result, WriteId write_id = {},
                bool continues_batch = false);

  // Makes room in the current segment for the next `bytes` of records (give
  // the worst case: a sync mark may precede each record), starting a new
  // segment now if they would not fit, so that appends of that much need no
  // new segment while nobody else appends (an atomic batch's, lsm::Region::
  // WriteBatch: a full device then refuses the batch before any of it is
  // appended). `bytes` must fit an empty segment. NoSpace changes nothing.
  Status ReserveRoom(size_t bytes);

  // For a log that recovery cut short (LogTail::dropped, or records past
  // its end): ends the current segment where the log ends now and releases
  // the dropped segments, durably, taking no new segment (so it works on a
  // full device). The region calls it before any of its logs takes a new
  // write: a write reuses the dropped LSNs, which must by then be gone from
  // every log.
  Status EndTail();

  // Where the log ends, as ReplayLog would find it, for a log that EndTail
  // ended (and nothing appended since): what a region split from this log's
  // region opens its own log with, continuing this chain without reading it
  // back (Engine::SplitRegion). Internal if the log is not ended.
  Status ExportTail(LogTail* tail) const;

  // Puts every buffered byte on the device (not necessarily durable).
  Status Write();
  // Returns once the log is durable through `position`.
  Status SyncTo(uint64_t position);

  // Reads `size` bytes at `device_offset` (a record appended earlier), from
  // the buffer or the device.
  // The `size` bytes at `device_offset` if they are in the chunk not yet
  // written (false otherwise: everything else of the log is on the device,
  // its segment header included).
  bool ReadBuffered(uint64_t device_offset, size_t size,
                    std::string* out) const;
  Status Read(uint64_t device_offset, size_t size, std::string* out) const;

  // Whether appending a record of `key_bytes` and `value_bytes` now might
  // put bytes on the device (a full chunk, a segment roll), or the log's
  // lock is held by another thread. Never waits; a hint (the state may
  // change right after): a thread that must not wait appends elsewhere then.
  bool AppendMayWrite(size_t key_bytes, size_t value_bytes) const;

  uint64_t appended_position() const;
  // OK, or the error that stopped the log for good (every append and sync
  // fails with it; a full device does not stop it).
  Status failure() const;
  // Segments in chain order.
  std::map<uint64_t, uint64_t> segments() const;
  // Adds to `batch` the release of every segment with chain index below
  // `chain_index` (never the current one) and returns them; the caller
  // commits the batch, then has the log Forget them (a batch that failed,
  // for lack of space, leaves the log as it was).
  std::vector<ReleasedSegment> ReleaseSegmentsBefore(
      uint64_t chain_index, alloc::MetadataBatch* batch);
  // Adds to `batch` the release of sealed segment `segment` (garbage
  // collected), as above. Requires it is not the current segment.
  ReleasedSegment ReleaseSegment(uint64_t segment, alloc::MetadataBatch* batch);
  // Drops segments whose release was committed.
  void Forget(const std::vector<ReleasedSegment>& released);
  LogWriterStats stats() const;
  const LogIdentity& identity() const { return identity_; }

 private:
  LogWriter(alloc::Volume* volume, io::SyncGroup* sync_group,
            LogIdentity identity, const LogWriterOptions& options);

  using IoLock = std::unique_lock<std::mutex>;

  // Encodes `record` into the chunk, which must have room for it.
  void AppendLocked(const Record& record, AppendResult* result);
  // Writes the chunk's unwritten bytes under `mutex_` (held) and `io`
  // (holding io_mutex_).
  Status WriteLocked(const IoLock& io);
  // The same with `mutex_` not held: copies the bytes under it, writes them
  // outside it.
  Status WriteOutside(const IoLock& io);
  // Whether appending a record of `size` bytes needs a new segment first.
  bool RollDueLocked(size_t size) const;
  // Whether appending `size` bytes may write (a roll, a full chunk): then
  // Append takes io_mutex_ first.
  bool AppendMayWriteLocked(size_t size) const;
  // Reserves the next segment, ends the current one with an end record
  // (once, however often a roll is retried) and puts it on the device,
  // then commits and starts the next one. A NoSpace error leaves the log
  // as it was, apart from an end record that stays.
  Status RollLocked(const IoLock& io);
  // Makes room for `bytes` more in the chunk, writing it out if needed.
  Status EnsureChunkRoomLocked(size_t bytes, const IoLock& io);
  void MakeRoomInChunkLocked(size_t record_size);
  uint64_t PositionLocked() const;
  Status FailLocked(Status status);

  alloc::Volume* const volume_;
  io::SyncGroup* const sync_group_;
  const LogIdentity identity_;
  const LogWriterOptions options_;

  std::mutex io_mutex_;  // before mutex_
  mutable std::mutex mutex_;
  std::map<uint64_t, uint64_t> segments_;  // chain index -> segment
  uint64_t segment_ = 0;                   // current segment
  uint64_t chain_index_ = 0;
  uint64_t next_chain_index_ = 0;  // of the next segment
  uint64_t nonce_ = 0;
  // The current segment has its end record (the roll after it failed);
  // a reopened log rolls at its first append.
  bool current_ended_ = false;
  bool roll_pending_ = false;
  std::map<uint64_t, uint64_t> dropped_;  // LogTail::dropped, until a roll
  std::vector<std::string> dropped_catalog_keys_;
  // Bytes [chunk_start_, chunk_start_ + fill_). Its pages go back at each
  // segment roll, so a log that stopped taking writes after one costs a
  // page, not the chunk (1,000 regions' logs on one server).
  io::ZeroPages chunk_;
  uint64_t chunk_start_ = 0;  // offset in segment, block-aligned
  size_t fill_ = 0;
  uint64_t written_end_ = 0;  // offset in segment written to the device
  uint64_t durable_position_ = 0;
  uint64_t marked_position_ = 0;  // last durable position put in a mark
  LogWriterStats stats_;
  uint64_t segment_put_bytes_ = 0;  // of the current segment
  uint64_t segment_max_lsn_ = 0;
  Status failed_;
};

}  // namespace kvs::log

#endif  // KVS_LOG_LOG_WRITER_H_
