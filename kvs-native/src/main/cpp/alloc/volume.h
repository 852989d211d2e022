// Volume: one file or block device shared by all regions of a server,
// allocated in 2 MiB segments, with crash-safe metadata.
//
// Durable state = the last checkpoint (allocator bitmap + catalog, written to
// fresh segments and published by a superblock write) plus the redo log of
// metadata batches committed since. Opening loads the checkpoint and replays
// the redo log.
//
// Segment life cycle:
//   free --Reserve--> reserved --Commit(batch.Allocate)--> allocated (1 ref)
//   allocated --Commit(batch.Share)--> one more reference
//   allocated --Commit(batch.Free)--> one reference fewer; free at the last
//     (once the batch is durable and no reader pins it)
// A reserved segment that is never committed is free again after a crash,
// so a crash mid-compaction leaks nothing. A freed segment is never handed
// out again before the batch that frees it is durable.
//
// One reference count frees every segment: durable references (each owner
// in the metadata: a region's level or log, later a region split from
// another or a snapshot) and readers' pins (Pin, and the pin a deferred free
// leaves until ReleaseDeferred), which last until the process ends. A
// segment is reusable when both are gone.
//
// Format versions: this build writes volume format 7 (kSuperblockFormatVersion;
// 2 added reference counts to the checkpoint and redo records, 3 regions'
// draining levels, a catalog entry format 2 builds would not read, 4 split
// regions' origins, which format 3 builds would ignore, 5 daughters' small
// logs beginning with their parent's segments, which format 4 builds would
// cut, 6 log records carrying a conditional write's write id, which format 5
// builds would take for the end of a log, 7 log records of atomic batches,
// which format 6 builds would take for the end of a log) and reads formats 1
// to 6, which Open upgrades by writing two checkpoints in format 7 at
// once, so that both superblock copies carry it (a build that reads only an
// older format then refuses the volume rather than fall back to the older
// copy, whose metadata is freed); a newer format is refused with
// InvalidArgument.
//
// A full device: Reserve fails with a NoSpace status (an IO_ERROR) once the
// volume cannot grow and only the metadata headroom is left -- enough free
// segments for the redo chain to link one more segment and for a
// checkpoint -- so that a commit freeing space (a compaction dropping old
// versions, a dropped region) still succeeds on a full device. Running out
// of space is never sticky: the next call tries again.
//
// Errors: any other I/O error while writing metadata is sticky: every later
// call that changes metadata fails with it (after a failed fsync the device
// state is unknown, so continuing could acknowledge lost data).
//
// Thread safety: all methods may be called concurrently.

#ifndef KVS_ALLOC_VOLUME_H_
#define KVS_ALLOC_VOLUME_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "alloc/metadata_batch.h"
#include "alloc/redo_log.h"
#include "alloc/segment_bitmap.h"
#include "alloc/superblock.h"
#include "io/file.h"
#include "util/status.h"

namespace kvs::alloc {

struct VolumeOptions {
  // A file volume grows by this many segments at a time (32 MiB): fallocate
  // is called rarely, and the file holds little unused space beyond its
  // high-water mark. When the file system has less room than a step, the
  // step halves, down to one segment, so every last segment gets used.
  uint64_t grow_step_segments = 16;
  // A checkpoint is taken once the redo log holds this many bytes, bounding
  // replay time at open.
  uint64_t checkpoint_redo_bytes = 64ull << 20;
};

struct VolumeStats {
  uint64_t capacity_segments;
  uint64_t allocated_segments;  // committed
  uint64_t reserved_segments;   // reserved, not yet committed
  uint64_t checkpoints;
  uint64_t redo_bytes;       // since the last checkpoint
  uint64_t shared_segments;  // allocated segments with more than one reference
};

class Volume {
 public:
  // Formats `file` as an empty volume.
  static Status Create(std::unique_ptr<io::File> file,
                       const VolumeOptions& options,
                       std::unique_ptr<Volume>* volume);
  // Opens a formatted volume: NotFound if it carries no KVS superblock,
  // Corruption if its metadata is damaged, InvalidArgument if a newer KVS
  // wrote it. A volume of format 1 is upgraded (a checkpoint is written:
  // NoSpace if the device has no room for it).
  static Status Open(std::unique_ptr<io::File> file,
                     const VolumeOptions& options,
                     std::unique_ptr<Volume>* volume);

  ~Volume();
  Volume(const Volume&) = delete;
  Volume& operator=(const Volume&) = delete;

  // Takes a free segment, growing a file volume when none is left. NoSpace
  // ("volume full") when a block device or the file system is full. The
  // reuse hook, if set, sees the segment before this returns.
  Status Reserve(uint64_t* segment);
  // Called with every segment Reserve hands out, before its new owner
  // writes it (outside the volume's lock): caches of what a segment held in
  // an earlier use (record nonces, nodes) drop it there, so that no path
  // that frees a segment (a region dropped, a replica adopted or trimmed)
  // has to remember them. Set before the volume is shared; not thread-safe.
  void SetReuseHook(std::function<void(uint64_t segment)> hook) {
    reuse_hook_ = std::move(hook);
  }
  // Returns a reserved segment that will not be committed.
  void Unreserve(uint64_t segment);

  // Applies `batch` durably (one redo record, synced). On success its
  // allocations are owned by the caller's metadata and its frees are
  // reusable. Requires: allocations reserved, frees allocated. A NoSpace
  // error means nothing was committed (the caller may retry later).
  Status Commit(const MetadataBatch& batch);

  // Drops the pin a MetadataBatch::FreeDeferred of `segment` left: reusable
  // once no reference or other pin is left.
  void ReleaseDeferred(uint64_t segment);

  // Keeps allocated `segments` from being reused while pinned: a commit
  // that frees one (or a deferred release of one) leaves it taken until its
  // last pin goes. For reading a region's segments without holding its
  // compactions off (a replication catch-up). Pins nest.
  void Pin(const std::vector<uint64_t>& segments);
  void Unpin(const std::vector<uint64_t>& segments);

  // Writes a checkpoint and starts a new redo chain (also done automatically
  // by Commit past VolumeOptions::checkpoint_redo_bytes).
  Status Checkpoint();

  std::optional<std::string> CatalogGet(std::string_view key) const;
  // Every catalog entry whose key starts with `prefix`, in key order.
  std::vector<std::pair<std::string, std::string>> CatalogScan(
      std::string_view prefix) const;

  bool IsAllocated(uint64_t segment) const;
  // The durable references to `segment` (0: not allocated).
  uint64_t References(uint64_t segment) const;
  // The format the volume's metadata is in (kSuperblockFormatVersion once
  // opened: older volumes are upgraded).
  uint32_t format_version() const;
  VolumeStats stats() const;
  // The sticky error, or OK.
  Status health() const;

  // The device, for reading and writing segment contents.
  io::File* file() const { return file_.get(); }

 private:
  Volume(std::unique_ptr<io::File> file, const VolumeOptions& options);

  // Who a segment is for: data may not take the metadata headroom.
  enum class Purpose { kData, kMetadata };
  Status ReserveLocked(uint64_t* segment, Purpose purpose);
  // Grows a file volume so that more than `free_wanted` segments are free,
  // a step at a time (halving the step when the file system is short).
  Status GrowLocked(uint64_t free_wanted);
  uint64_t FreeSegmentsLocked() const;
  // Free segments kept for metadata: one redo link plus a checkpoint as
  // large as the last one (and one more segment, as it may grow).
  uint64_t MetadataHeadroomLocked() const;
  Status CheckpointLocked();
  Status LoadCheckpoint(const Superblock& superblock);
  // Validates a replayed batch against the metadata, then applies it.
  Status ReplayLocked(const MetadataBatch& batch);
  // Applies a durable batch; `release` also makes freed segments reusable
  // (and pins deferred frees).
  void ApplyLocked(const MetadataBatch& batch, bool release);
  // Drops one durable reference to allocated `segment`; at the last, it
  // leaves the metadata and, with `release`, becomes reusable unless pinned.
  void DropReferenceLocked(uint64_t segment, bool release);
  void UnpinLocked(uint64_t segment);
  std::unique_ptr<RedoLogWriter> MakeRedoWriter(uint64_t generation);
  Status Fail(Status status);  // records a sticky error, returns it

  const std::unique_ptr<io::File> file_;
  const VolumeOptions options_;

  mutable std::mutex mutex_;
  Superblock superblock_;    // the one last written or read
  SegmentBitmap allocated_;  // durable view: what the metadata owns
  SegmentBitmap in_use_;     // allocated + reserved (never handed out)
  std::map<std::string, std::string, std::less<>> catalog_;
  // Allocated segments with more than one durable reference: the references
  // beyond the first.
  std::map<uint64_t, uint64_t> shares_;
  std::vector<uint64_t> redo_segments_;  // the current chain
  std::unique_ptr<RedoLogWriter> redo_;
  uint64_t next_search_ = 1;
  uint64_t checkpoints_ = 0;
  Status failed_;
  // Pinned segments and their pin counts, and those of them whose last
  // durable reference went while pinned (reusable once unpinned).
  std::map<uint64_t, size_t> pins_;
  std::function<void(uint64_t segment)> reuse_hook_;
  std::set<uint64_t> freed_while_pinned_;
};

}  // namespace kvs::alloc

#endif  // KVS_ALLOC_VOLUME_H_
