// Region: one key range's LSM tree on a shared volume.
//
// Write path: a put is classified (kv_placement.h), appended to the region's
// write-ahead (small) log or, for a large KV, to its large log, and inserted
// into the active L0. When the active L0 reaches its size it becomes
// immutable and a compaction job merges it into L1, then pushes full levels
// down and collects large-log garbage. A full L0 switches at once while
// fewer than RegionOptions::immutable_l0_max immutable L0s wait for their
// merge into L1 (the running job goes on with them, oldest first), so a
// job's merges below L1 hold no writer up; a writer that finds the active L0
// full with that many waiting stalls (counted) until the oldest is merged,
// or fails with BUSY after the stall timeout.
//
// Durability: with EngineOptions::sync a put returns after its log record is
// durable; otherwise a background flusher makes it durable within the flush
// interval, and Sync() makes everything acknowledged so far durable.
//
// Recovery: opening replays the small and large logs past the last
// compacted LSN, merged in LSN order, into L0, up to the first LSN missing
// from both (point in time: each log recovers to a prefix of its own, and
// without a sync their ends differ), or to where an atomic batch began whose
// last record is not there (WriteBatch). Records past that point are dropped,
// counted in RecoveryReport, and made unreadable: each log ends where its
// first dropped record began, and later segments are released, when the
// log next appends.
//
// Split: a region split from another (Engine::SplitRegion) serves the keys
// within its bounds (lsm/key_bounds.h) and starts out reading its parent's
// levels and large-log segments, shared with its sibling through the
// volume's reference counts (no data is copied). Writes outside the bounds
// are refused, reads there find nothing; its compactions leave out what
// lies outside (the large-log records behind it count as garbage), so each
// merge drops its references to the parent's level segments, and large-log
// GC releases (or relocates what is live of) the parent's segments like its
// own. Both its logs continue the parent's chains: the parent's segments
// keep their chain indexes (their headers name the parent, an ancestor the
// log accepts), the daughter's own follow. Nothing is merged at the split:
// the daughters take the parent's L0s, in memory, as immutable L0s of
// their own (each reads and merges only its keys) and merge them at once
// in the background; until they have, the parent's write-ahead log is what
// makes those writes durable, and a daughter opened after a crash replays
// it, keeping its own keys (PrepareSplit, OpenDaughter).
//
// Thread safety: all public methods may be called concurrently.

#ifndef KVS_LSM_REGION_H_
#define KVS_LSM_REGION_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "alloc/volume.h"
#include "io/sync_group.h"
#include "log/log_writer.h"
#include "lsm/compaction.h"
#include "lsm/key_bounds.h"
#include "lsm/kv_placement.h"
#include "lsm/l0_budget.h"
#include "lsm/l0_table.h"
#include "lsm/level.h"
#include "lsm/load_sample.h"
#include "lsm/node_cache.h"
#include "lsm/record_reader.h"
#include "lsm/region_iterator.h"
#include "lsm/write_ids.h"
#include "util/status.h"
#include "util/thread_pool.h"

namespace kvs::lsm {

struct RegionOptions {
  // An L0 is compacted once the KV pairs it stands for (key + value bytes,
  // values behind pointers included, as Parallax sizes levels for merging
  // down) or the memory it uses reach this size.
  size_t l0_size_bytes = 64ull << 20;
  // Size ratio between consecutive device levels.
  unsigned growth_factor = 8;
  PlacementOptions placement;
  // How long a writer waits for a full L0 to drain before BUSY.
  uint32_t stall_timeout_ms = 10'000;
  // Immutable L0s that may wait for their merge into L1 (the one being
  // merged included) before a writer that fills the active L0 stalls: room
  // for the merges below L1 that a compaction job runs after its own merge
  // (one L1 -> L2 merge rewrites up to growth_factor L0s of data). The L0s
  // waiting are merged into L1 together, so the more wait, the less each
  // costs. Their memory counts in the engine's L0 budget, which bounds them
  // all and is the limit that binds first unless L0s are small: on a 4 GiB
  // load with 64 MiB L0s (docs/BENCHMARKS.md), 7 instead of 3 took Load A
  // from 485 K to 580 K ops/s and its I/O amplification from 4.42 to 4.13.
  unsigned immutable_l0_max = 7;
  double bloom_bits_per_key = 10;
  // Large-log GC relocates the live records of sealed segments whose
  // garbage is at least this fraction, most garbage first, at most this
  // many segments after each compaction.
  double gc_garbage_ratio = 0.5;
  unsigned gc_segments_per_pass = 4;
  // Older versions in the last level keep their values (and large-log
  // records) alive until the versions above them are merged down. Once the
  // entries compacted out of L0 since the last such merge are estimated
  // (through the last level's Bloom filter) to hide more than this fraction
  // of the last level's KV bytes, every level is merged down into the last,
  // which bounds the space stale versions hold to about this fraction.
  double stale_fraction_max = 0.15;
};

// What a region needs from the engine that owns it.
struct RegionContext {
  alloc::Volume* volume = nullptr;
  io::SyncGroup* sync_group = nullptr;
  bool sync = false;
  log::LogWriterOptions log_options;
  NodeCache* nodes = nullptr;
  RecordReader* records = nullptr;
  ThreadPool* compactions = nullptr;
  // Shared by every region of the engine; null: no global bound.
  L0Budget* l0_budget = nullptr;
  // Replication hooks (Send-Index ships what they report). Called from the
  // compaction thread: for every finished index segment of a compaction's
  // output (its number and bytes, before the level is installed), and once
  // the new level is installed (durable) -- `level` (0 is L1) now holds
  // `descriptor` (empty: the level is gone) and `emptied`, if any, the
  // source level merged into it, holds nothing; every write at or below
  // `compacted_lsn` is in the levels now (the logs hold what comes after).
  // Must not call back into the region.
  // `level` is the level the segment's compaction installs (two
  // compactions of a region may run at once: the merge of L0s into L1 and
  // the drain of former L1s into L2 -- draining levels -- and below).
  std::function<void(uint64_t region_id, size_t level, uint64_t segment,
                     std::string_view bytes)>
      on_index_segment;
  std::function<void(uint64_t region_id, size_t level,
                     const LevelDescriptor& descriptor,
                     std::optional<size_t> emptied, uint64_t compacted_lsn)>
      on_level_installed;
  // Value-log replication: every byte range the region's small or large
  // log appends (log::AppendedBytes), in each log's order, on the writing
  // thread before the write returns; and what compactions append to the
  // medium log, on the compaction thread, before the index segments that
  // may point at it. Must not call back into the region.
  std::function<void(uint64_t region_id, log::LogKind kind,
                     const log::AppendedBytes& appended)>
      on_log_append;
  // Segments of the small or large log the region freed (committed), after
  // the level that stopped pointing at them was reported installed: what
  // Send-Index's GC mirroring trims on the backups. Must not call back into
  // the region.
  std::function<void(uint64_t region_id, log::LogKind kind,
                     const std::vector<log::ReleasedSegment>& released)>
      on_log_released;
};

// What a replication catch-up is told about a region (Region::ReportState):
// the same events RegionContext's replication hooks carry, for the state
// the region has now, with segments by reference (read them with
// Region::ReadSegment while they are pinned).
struct StateVisitor {
  // First, once: the LSN the region's levels hold every write up to (as
  // in RegionContext::on_level_installed), also when it has no level.
  std::function<void(uint64_t compacted_lsn)> compacted;
  // A log segment's first `bytes` bytes (small and large logs: every live
  // segment, the current one up to where the log ends; medium: every
  // segment a level holds, whole).
  std::function<void(log::LogKind kind, uint64_t chain_index, uint64_t segment,
                     uint64_t bytes)>
      log_segment;
  // An index segment of level `level` (read it whole: zeros follow its
  // nodes), before the level itself.
  std::function<void(uint64_t segment)> index_segment;
  // A level, after its index segments; `compacted_lsn` as in
  // RegionContext::on_level_installed.
  std::function<void(size_t level, const LevelDescriptor& descriptor,
                     uint64_t compacted_lsn)>
      level;
};

// What opening a region recovered from its logs (zeros for a new region).
struct RecoveryReport {
  uint64_t replayed_writes = 0;  // logged after the levels, now in L0
  // Writes found in a log past the first LSN missing from both logs (the
  // point in time recovered), dropped with everything after them.
  uint64_t dropped_writes = 0;
  // The first LSN dropped (missing, or the first of a batch kept in part),
  // or 0: nothing dropped.
  uint64_t cut_lsn = 0;
  uint64_t micros = 0;  // replaying the logs
};

// Per-level statistics cover L1..L8; deeper levels count into the last slot.
inline constexpr size_t kStatsLevels = 8;

struct RegionStats {
  uint64_t puts = 0;
  uint64_t deletes = 0;
  uint64_t gets = 0;
  uint64_t l0_bytes = 0;
  uint64_t l0_entries = 0;
  uint64_t immutable_l0s = 0;  // waiting for (or in) their merge into L1
  // L0s merged into L1 so far, and the merges that took them (several L0s
  // that waited in line are merged together).
  uint64_t l0s_merged = 0;
  uint64_t l0_merges = 0;
  uint64_t stalls = 0;
  uint64_t stall_micros = 0;
  // Of the stalls, those that waited for the engine's L0 memory budget
  // (other regions' L0s, or this region's, above it) rather than for this
  // region's L0s in line.
  uint64_t budget_stalls = 0;
  uint64_t small_log_bytes = 0;
  uint64_t large_log_bytes = 0;
  uint64_t last_lsn = 0;
  uint64_t compactions = 0;
  uint64_t compaction_bytes_written = 0;
  // Wall time of the compactions counted, from start to install.
  uint64_t compaction_micros = 0;
  uint64_t level_count = 0;
  // All device levels; of a region split from another, the part of each
  // level inside its bounds, estimated (TreeReader::EstimateFraction).
  uint64_t level_kv_bytes = 0;
  uint64_t large_garbage_bytes = 0;
  uint64_t gc_relocated_bytes = 0;
  uint64_t gc_freed_segments = 0;
  uint64_t large_log_segments = 0;  // held now
  // Device traffic by cause. Compaction bytes are counted per output level
  // (index 0 = L1): what compactions into that level read (both input
  // levels' nodes and medium records) and wrote (nodes, filters, medium
  // log).
  uint64_t compaction_bytes_read = 0;
  uint64_t medium_log_bytes = 0;  // written into medium logs
  uint64_t value_bytes_read = 0;  // log records read by gets and scans
  uint64_t gc_bytes_read = 0;     // large-log segments read by GC
  uint64_t level_bytes_read[kStatsLevels] = {};
  uint64_t level_bytes_written[kStatsLevels] = {};
  RecoveryReport recovery;
  // Segments of its levels and large log that another region holds too (a
  // split's sibling).
  uint64_t shared_segments = 0;
  // Key and value bytes written into L0 (active and immutable) since its
  // last merge: l0_bytes is memory, which holds only pointers to large
  // values.
  uint64_t l0_kv_bytes = 0;
};

class Region {
 public:
  // Creates a new region `name` with identifier `id` (its catalog entries
  // are committed before this returns).
  static Status Create(const RegionContext& context, std::string name,
                       uint64_t id, const RegionOptions& options,
                       std::unique_ptr<Region>* region);
  // Opens region `id`, replaying its logs.
  static Status Open(const RegionContext& context, std::string name,
                     uint64_t id, const RegionOptions& options,
                     std::unique_ptr<Region>* region);

  // Waits for a running compaction, syncs the logs, then releases
  // everything.
  ~Region();
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

  // TOO_LARGE for a key above 4 KiB or a value above 1 MiB; INVALID_ARGUMENT
  // for an empty key or one outside the region's bounds.
  // A present `write_id` (a conditional write's) is kept with the record in
  // the log and in write_ids().
  Status Put(std::string_view key, std::string_view value,
             log::WriteId write_id = {});
  Status Delete(std::string_view key, log::WriteId write_id = {});
  // One write of an atomic batch: a put of `value`, or a delete.
  struct BatchWrite {
    bool put = true;
    std::string_view key;
    std::string_view value;
  };
  // Applies `writes` (in order: a later write of a key wins) all or
  // nothing: they take consecutive LSNs, appended and inserted into the
  // active L0 with no other write between them (l0_mutex_ held
  // exclusively), so a scan sees all or none of them, a compaction takes
  // them together, and recovery keeps the batch only if every record of
  // it is there, in either log (log_format.h, kRecordContinuesBatch).
  // Validated whole first: INVALID_ARGUMENT for an empty batch, an empty
  // key or one outside the bounds; TOO_LARGE for a key or value over its
  // limit or a batch over limits::batch_writes_max writes or
  // limits::batch_bytes_max bytes -- nothing written. A failure after the
  // first append (a full device, a failed log) leaves what was appended
  // unacknowledged: the region's log has failed or recovery drops it.
  Status WriteBatch(const std::vector<BatchWrite>& writes);
  // The write ids of the conditional writes this region applied, as far as
  // it knows them (lsm/write_ids.h).
  const WriteIds& write_ids() const { return write_ids_; }
  // The last LSN taken (every write appended so far has one at most this).
  uint64_t last_lsn() const { return lsn_.load(std::memory_order_relaxed); }
  // Whether writing `key` (a put of `value`, or a delete) now might wait:
  // its L0 full with a compaction behind, the engine's L0 memory budget
  // exceeded, its log about to put bytes on the device (a full chunk, a
  // segment roll), or a lock it takes held by another thread. A thread that
  // must not wait writes elsewhere then. Never waits itself; a hint (the
  // state may change right after).
  bool WriteMayWait(bool put, std::string_view key,
                    std::string_view value) const;
  // Whether every write waits until it is durable (the engine's sync mode):
  // each one waits for the device.
  bool WritesSync() const { return context_.sync; }
  // NOT_FOUND if the key has no value (or lies outside the bounds).
  Status Get(std::string_view key, std::string* value);
  // Makes every write acknowledged so far durable.
  Status Sync();
  // Puts buffered log bytes on the device and syncs them (the flusher).
  Status Flush();

  // An iterator over a snapshot of the region's live keys, below
  // `upper_bound` (exclusive) and at or above `lower_bound` if given (and
  // within the region's bounds), forward or backward. See
  // region_iterator.h.
  std::unique_ptr<RegionIterator> NewIterator(
      std::optional<std::string> upper_bound,
      std::optional<std::string> lower_bound = std::nullopt) const;

  RegionStats stats() const;
  // The keys the region serves (every key unless it was split from
  // another), and the regions whose segments it may still hold.
  const KeyBounds& bounds() const { return origin_.bounds; }
  const std::vector<uint64_t>& ancestors() const { return origin_.ancestors; }
  // An L0 switched out, waiting for (or in) its merge into L1.
  struct Immutable {
    std::shared_ptr<L0Table> table;
    // Log positions and the LSN when it was switched.
    uint64_t small_position = 0;
    uint64_t large_position = 0;
    uint64_t max_lsn = 0;
    // Its memory in the engine's L0 budget. In a SplitHandoff: what no
    // daughter took yet (the lower takes half, the upper the rest;
    // Engine::SplitRegion releases what is left when a daughter does not
    // open).
    uint64_t accounted = 0;
    uint64_t kv_bytes = 0;  // key and value bytes written into it
  };
  // What a region hands its daughters at a split (PrepareSplit): its L0s,
  // which they take as immutable L0s of their own, and where its logs end,
  // which they continue.
  struct SplitHandoff {
    std::deque<Immutable> tables;  // oldest first
    uint64_t last_lsn = 0;
    log::LogTail small_tail;
    log::LogTail large_tail;
    uint64_t Accounted() const;
  };
  // Makes the region ready for Engine::SplitRegion, which closes it right
  // after: waits for the compaction running (a queued L0 is not merged),
  // ends both logs' current segments, durably (the daughters read them,
  // never append to them), and moves its L0s into `handoff` (the region
  // holds none after). Merging nothing is what keeps the split short: the
  // daughters merge their shares after it, while they serve. The caller
  // holds every writer off. The error that stopped the region, or a log's
  // (NoSpace: the volume full), with the region left as it was.
  Status PrepareSplit(SplitHandoff* handoff);
  // Opens daughter `id` (committed by Engine::SplitRegion) from the
  // parent's `handoff`: its levels from the catalog, the parent's L0s as
  // its immutable L0s (merged at once, in the background), its logs
  // continuing the parent's where they ended -- nothing read back, which
  // is what Open after a crash does instead. `upper`: the upper daughter
  // (takes what is left of the L0 budget's bytes).
  static Status OpenDaughter(const RegionContext& context, std::string name,
                             uint64_t id, const RegionOptions& options,
                             SplitHandoff* handoff, bool upper,
                             std::unique_ptr<Region>* region);
  // Merges the writes made so far into the levels while the region keeps
  // serving (writes go on into a new L0). Waits at most `wait_ms` (writes
  // may keep compactions busy); true if every write before the call was
  // merged in time. Nothing changes what the region holds.
  bool MergeAhead(uint64_t wait_ms);
  // Where the region splits by size, without a scan of its levels: a key of
  // its largest device level below which about half of its bytes inside its
  // bounds lie -- every level's estimated from its index and weighted by its
  // bytes, L0's counted from a sample of its keys (at most
  // kSplitKeyL0Samples) -- the candidate bisected over the largest level
  // with TreeReader::KeyAtFraction (kSplitKeyRounds rounds). *found is false
  // if L0 holds more than the levels (the caller walks the keys instead) or
  // no level key lies inside the bounds.
  Status SplitKey(std::string* key, bool* found) const;
  // Where the region splits by load: the median of the keys its recent
  // requests named (LoadSample: one put, delete or get in 16, the last
  // 1,024 kept) that its bounds split at; false with fewer than 64 of them.
  bool LoadSplitKey(std::string* key) const {
    return load_sample_.Median(origin_.bounds, key);
  }
  static constexpr int kSplitKeyRounds = 12;
  static constexpr size_t kSplitKeyL0Samples = 65536;
  // OK while the region works; once a compaction or one of its logs failed
  // (not for want of space: that heals when space returns), the error that
  // stopped it: writes are refused with it from then on, for good (its
  // server hands the region over: the master moves it to another replica).
  Status StoppedBy() const;
  // What the region serves at one moment, for verifying replicas
  // (replication/contents_digest.h): its device levels by index (0 is L1;
  // null: empty), shared, so they stay readable while held whatever
  // compactions do meanwhile; the entries of its L0s (active and
  // immutable); the last LSN taken and the compacted LSN.
  struct Served {
    std::vector<std::shared_ptr<Level>> levels;
    uint64_t l0_entries = 0;
    uint64_t last_lsn = 0;
    uint64_t compacted_lsn = 0;
  };
  Served ServedNow() const;
  // Memory held by the active and the immutable L0s.
  struct L0Memory {
    uint64_t active = 0;
    uint64_t immutable = 0;
  };
  L0Memory L0MemoryBytes() const;
  // Switches a non-empty active L0 and schedules its compaction now, unless
  // a compaction is already running (the engine's memory budget uses it).
  void RequestCompaction();

  // Replication catch-up: with writers, compactions and GC held off for the
  // moment it takes (no device reads: the logs' buffers are written out,
  // segments reported by reference), reports to `visitor` everything a
  // backup needs to mirror the region from nothing (its logs' live
  // segments, its levels' medium and index segments, its levels), pins
  // every segment reported (`*pinned`; the caller unpins them with
  // alloc::Volume::Unpin once read: until then compactions and GC may free
  // them, but the volume does not reuse them), then runs `then`, still
  // holding everything off, so that whatever the region appends afterwards
  // follows what was reported.
  Status ReportState(const StateVisitor& visitor,
                     const std::function<void()>& then,
                     std::vector<uint64_t>* pinned);
  // Reads bytes [from, bytes) of a segment of `volume` that ReportState
  // reported (and pinned) into `out` (`from`: a multiple of the I/O
  // alignment); with `trim_zeros`, the zero blocks that end it are left off
  // (index segments).
  static Status ReadSegment(alloc::Volume* volume, uint64_t segment,
                            size_t from, size_t bytes, bool trim_zeros,
                            std::string* out);
  alloc::Volume* volume() const { return context_.volume; }

  // Blocks until no compaction is queued or running (splits, tests,
  // benchmarks), then frees the retired levels no reader holds.
  void WaitForCompactions();
  // The live segments of the small or large log, by chain index (tests,
  // tools).
  std::map<uint64_t, uint64_t> LogSegments(log::LogKind kind) const;
  // Per-level entry counts and sizes, for tests and statistics, by level
  // number (a draining level, none once WaitForCompactions returns, is not
  // among them).
  std::vector<LevelDescriptor> LevelDescriptors() const;
  const std::string& name() const { return name_; }
  uint64_t id() const { return id_; }
  // A random number drawn each time the region opens (created, recovered,
  // or reopened by a promotion): while it stays, the region's sealed log
  // segments and levels only grow from what they were (a recovery may end
  // a log before bytes a backup already holds), so a backup that mirrored
  // this incarnation may resume from what it holds.
  uint64_t incarnation() const { return incarnation_; }
  // The incarnation of the `upper` (else lower) daughter of a split of a
  // region of incarnation `parent` (0 for 0): drawn by no one, so that a
  // Send-Index backup that split its replica of the parent's lineage
  // (Engine::SplitRegion) names the lineage the primary's daughter goes on
  // with, and resumes from what it holds.
  static uint64_t DaughterIncarnation(uint64_t parent, bool upper);
  // Takes `incarnation` instead of the one drawn (Engine::SplitRegion, on a
  // daughter it just opened: its logs and levels are those of the parent,
  // which only grow from what they were).
  void InheritIncarnation(uint64_t incarnation) { incarnation_ = incarnation; }

  // The catalog key prefix of everything this region owns.
  static std::string CatalogPrefix(uint64_t id);
  // The catalog key prefix of region `id`'s `kind` log: one entry per
  // segment, the key ending in its chain index (%016x), the value the
  // segment (fixed64).
  static std::string LogCatalogPrefix(uint64_t id, log::LogKind kind);
  // Level numbers of the draining levels: former L1s waiting for (or in)
  // their merge into L2 (the drain), read after L1 and before L2 while
  // merges of L0s go on into a new L1 (see region_compaction.cc). Up to
  // kDrainingLevelsMax at once, numbered down from kDrainingLevelLast: a
  // lower number is newer, read first. Send-Index ships them under these.
  static constexpr size_t kDrainingLevelLast = 63;
  static constexpr size_t kDrainingLevelsMax = 4;
  static constexpr size_t kDrainingLevelFirst =
      kDrainingLevelLast + 1 - kDrainingLevelsMax;
  static bool IsDrainingLevel(size_t level) {
    return level >= kDrainingLevelFirst && level <= kDrainingLevelLast;
  }
  // The catalog key of region `id`'s level `level` (0 is L1; a draining
  // level "draining/NN", NN its number): its LevelDescriptor.
  static std::string LevelCatalogKey(uint64_t id, size_t level);
  // The catalog key of region `id`'s compacted LSN (fixed64): every write
  // at or below it is in the levels.
  static std::string StateCatalogKey(uint64_t id);
  // The catalog key of a split region's origin (RegionOrigin: its bounds
  // and ancestors); absent for a region never split.
  static std::string OriginCatalogKey(uint64_t id);

 private:
  Region(const RegionContext& context, std::string name, uint64_t id,
         const RegionOptions& options);

  // Opens the logs: new ones (`recover` false), recovered by replay, or
  // (`handoff`) continuing a parent's where they ended.
  Status OpenLogs(bool recover, const SplitHandoff* handoff = nullptr);
  // One replayed write, to be merged across logs by LSN, and where it lies.
  struct ReplayedWrite {
    uint64_t lsn;
    uint8_t kind;  // L0 entry kind
    std::string key;
    std::string payload;
    log::LogKind log;
    uint64_t chain_index;
    uint64_t offset_in_segment;
    log::WriteId write_id;
    bool continues_batch;  // an atomic batch goes on at the next LSN
  };
  // Point-in-time recovery: ends `identity`'s log (segments from the
  // catalog) before its first write among writes[kept..] (sorted by LSN),
  // in `tail`, and sets `cut_here`; leaves `tail` alone if the log holds
  // none of them.
  Status CutLog(const log::LogIdentity& identity,
                const std::map<uint64_t, uint64_t>& segments,
                const std::vector<ReplayedWrite>& writes, size_t kept,
                log::LogTail* tail, bool* cut_here);
  std::shared_ptr<L0Table> NewL0() const;
  // Whether the active L0 has reached its size. Caller holds l0_mutex_.
  bool ActiveFullLocked() const;
  // Accounts growth of the active L0 in the engine's budget.
  void AccountActiveMemory();
  // Makes the active L0 immutable and schedules its compaction. Caller
  // holds stall_mutex_ and l0_mutex_ exclusively, with no compaction
  // running.
  void SwitchL0Locked();
  // Makes the active L0 immutable for the running job to compact once it is
  // done with what comes before. Caller holds
  // stall_mutex_ and l0_mutex_ exclusively, with a compaction running and
  // fewer than immutable_l0_max immutable L0s.
  void QueueSwitchL0Locked();
  // The part of both switches that turns the active L0 immutable. Caller
  // holds l0_mutex_ exclusively.
  void MakeActiveImmutableLocked();
  // Starts a compaction job for the oldest immutable L0. Caller holds
  // stall_mutex_, with no compaction running.
  void StartCompactionLocked();
  // After a quiesce (ReportState, PrepareSplit): starts the job for an L0
  // queued while it waited, or drops the queue if a job failed meanwhile.
  void ResumeAfterQuiesceLocked();
  // ReportState's work once no compaction runs. Caller holds stall_mutex_.
  Status ReportStateLocked(const StateVisitor& visitor,
                           const std::function<void()>& then,
                           std::vector<uint64_t>* pinned);
  Status Write(log::RecordType type, std::string_view key,
               std::string_view value, log::WriteId write_id);
  Status ValidateKeyValue(std::string_view key, std::string_view value) const;
  // OK, or why the region takes no write: an atomic batch failed after some
  // of its records were appended, and a later LSN would make recovery take
  // them for a whole batch. Caller holds l0_mutex_ (either way).
  Status WritesStoppedLocked() const;
  Status ReadLarge(const LogPointer& pointer, std::string_view key,
                   std::string* value) const;
  // Resolves an L0 entry into a value or NotFound (tombstone).
  Status ResolveL0(const L0Table::Entry& entry, std::string* value) const;
  Status ResolveLevel(std::string_view key, const btree::LeafValue& leaf,
                      std::string* value) const;
  // Whether a write (a put of `value`, or a delete) of `key` goes to the
  // large log rather than the small one.
  bool GoesToLargeLog(bool put, std::string_view key,
                      std::string_view value) const;
  // The L0 tables and levels as they are now (a reader's snapshot).
  struct Tables {
    std::shared_ptr<L0Table> active;
    std::vector<std::shared_ptr<L0Table>> immutables;  // newest first
    std::vector<std::shared_ptr<Level>> levels;
  };
  Tables TablesNow() const;
  // Makes room in L0 (switching tables); may stall.
  Status MakeRoomForWrite();
  Status LoadLevels();
  // Draws the incarnation.
  void DrawIncarnation();
  void BackgroundCompaction();
  // Records how a job ended (NoSpace: transient; another error stops the
  // region). Caller holds stall_mutex_.
  void RecordJobStatusLocked(const Status& status);
  // The drain: merges the draining levels into L2 (again while L1s were
  // renamed meanwhile), then pushes full levels below down (or every
  // level, when stale versions call for it).
  void BackgroundDrain();
  // Merges every draining level into L2, in one pass.
  Status CompactDraining();
  // Whether L1 should be merged down now: over its capacity, or stale
  // versions call for merging every level and a level lies below.
  bool L1WantsDrain() const;
  // Run by the L0 job after its merge: turns a full L1 into a draining
  // level (a catalog rename; unless kDrainingLevelsMax wait, then L1 grows
  // until the drain takes them), and starts the drain unless one runs --
  // also for draining levels a crash or a failed drain left.
  Status MaybeStartDrain();
  // The levels in the order reads consult them, with their numbers (the
  // draining levels under theirs); empty levels left out. Caller holds
  // l0_mutex_.
  std::vector<std::pair<size_t, std::shared_ptr<Level>>> NumberedLevelsLocked()
      const;
  // The same without the numbers.
  std::vector<std::shared_ptr<Level>> ReadOrderLevelsLocked() const;
  // Level `number`'s slot (a draining level's in draining_; an empty one
  // left there is erased by the caller). Caller holds l0_mutex_
  // exclusively.
  std::shared_ptr<Level>& SlotLocked(size_t number);
  // Fills in what every compaction job of this region shares; `output` is
  // the level the job installs.
  void PrepareJob(CompactionJob* job, size_t output) const;
  Status CompactImmutable();
  // KV bytes of `table`'s newest versions that the last level `last`
  // probably holds older versions of (its Bloom filter says so).
  static uint64_t EstimateShadowedBytes(const L0Table& table,
                                        const Level& last);
  // Whether stale versions in the last level call for a merge down.
  bool TooMuchStaleData() const;
  // Compacts level index `source` (0 = L1) into the next level.
  Status CompactLevel(size_t source);
  // Commits a compaction's result as level `output` (0 = L1).
  // `merged_sources` are the levels merged into `output`: they are emptied
  // in the same step (the caller's batch deletes their catalog entries).
  // `compacted_lsn`, if set, is the region's compacted LSN once installed (a
  // merge of L0s); else it stays. Installs are serialized (install_mutex_), so
  // the LSN each reports to the replication hook never goes back.
  Status Install(size_t output, CompactionResult& result,
                 alloc::MetadataBatch& batch,
                 const std::vector<size_t>& merged_sources,
                 std::optional<uint64_t> compacted_lsn);
  void ReclaimRetired();
  // Large-log GC: frees dead sealed segments, relocates live records of
  // the most-garbage ones (see region_gc.cc).
  Status CollectGarbage();
  Status RelocateLiveRecords(uint64_t segment);
  // Sealed large-log segments whose records are all garbage. Caller holds
  // gc_mutex_.
  std::vector<uint64_t> DeadSegmentsLocked() const;
  // Adds their release to `batch` and returns them. Must not hold
  // gc_mutex_ (takes the large log's lock, which the seal hook holds while
  // taking gc_mutex_).
  std::vector<log::ReleasedSegment> ReleaseSegments(
      const std::vector<uint64_t>& segments, alloc::MetadataBatch* batch);
  // Reports committed releases (RegionContext::on_log_released).
  void ReportReleased(log::LogKind kind,
                      const std::vector<log::ReleasedSegment>& released) const;
  void ForgetSegmentsLocked(const std::vector<uint64_t>& segments);
  // The large log's seal hooks: the segment's totals go into the batch
  // that starts the next segment, and into the GC state once it is durable.
  void OnLargeSegmentSealed(const log::SealedSegment& sealed,
                            alloc::MetadataBatch* batch);
  void OnLargeSegmentSealedDurably(const log::SealedSegment& sealed);
  uint64_t LevelCapacityBytes(size_t level) const;
  std::string LevelKey(size_t level) const;
  friend class RegionIterator;  // resolves values like Get

  const RegionContext context_;
  const std::string name_;
  const uint64_t id_;
  const RegionOptions options_;

  RecoveryReport recovery_;  // set by Open
  RegionOrigin origin_;      // set by Open (LoadLevels)
  std::unique_ptr<log::LogWriter> small_log_;
  std::unique_ptr<log::LogWriter> large_log_;
  std::atomic<uint64_t> lsn_{0};
  // Set, under l0_mutex_ held exclusively, by an atomic batch that failed
  // part-way (WritesStoppedLocked); for good, until the region is reopened
  // (recovery drops the batch).
  std::atomic<bool> writes_stopped_{false};
  Status stop_reason_;  // set before writes_stopped_
  uint64_t incarnation_ = 0;
  WriteIds write_ids_{limits::write_ids_per_region_max};

  // Writers hold it shared while appending + inserting; switching the
  // active L0 holds it exclusively, so a switch sees no half-done write.
  mutable std::shared_mutex l0_mutex_;
  std::shared_ptr<L0Table> active_;
  std::deque<Immutable> immutables_;  // oldest first
  // Key + value bytes written into active_ (reset when it is switched).
  std::atomic<uint64_t> active_kv_bytes_{0};
  // Memory of active_ accounted in the engine's L0 budget.
  std::atomic<uint64_t> active_accounted_{0};
  std::vector<std::shared_ptr<Level>> levels_;  // [0] = L1; null = empty
  // The draining levels by number (ascending: newest first), read between
  // levels_[0] and levels_[1].
  std::map<size_t, std::shared_ptr<Level>> draining_;
  uint64_t compacted_lsn_ = 0;
  // Held by every change to the levels' catalog entries and the release of
  // large-log segments (installs, the rename into the draining level, GC's
  // release of dead segments): two jobs of the region may run at once.
  std::mutex install_mutex_;

  mutable std::mutex stall_mutex_;
  std::condition_variable l0_drained_;
  bool compacting_ = false;  // guarded by stall_mutex_
  // The drain job runs (guarded by stall_mutex_); only it changes levels
  // below L1 and empties draining levels.
  bool draining_job_ = false;
  // Guarded by stall_mutex_, meaningful while no job runs: the immutable
  // L0s were switched while the last job ran, which ended for a catch-up
  // (ReportState starts the next job once done); false: none waits, or
  // those left were left by a job that failed.
  bool immutable_queued_ = false;
  // Catch-ups (ReportState) waiting for no compaction to run, guarded by
  // stall_mutex_: while there are any, a job does not go on with a queued
  // L0, so that a steady stream of switches cannot hold them off.
  int quiesce_waiters_ = 0;
  Status background_error_;  // guarded by stall_mutex_; sticky
  // The last compaction's NoSpace error (OK once one succeeds), guarded by
  // stall_mutex_: transient, never sticky.
  Status compaction_no_space_;

  // Levels replaced by compaction, kept until no reader holds them.
  struct Retired {
    std::vector<std::shared_ptr<Level>> levels;
    std::vector<uint64_t> segments;
  };
  std::mutex retired_mutex_;
  std::vector<Retired> retired_;
  // Large-log garbage collection state, guarded by gc_mutex_ (taken
  // without holding any other region lock, and never held across calls
  // into the logs except the seal hook, which takes only it).
  std::mutex gc_mutex_;
  std::map<uint64_t, uint64_t> large_garbage_;  // segment -> bytes
  struct Sealed {
    uint64_t put_bytes;
    uint64_t max_lsn;
  };
  std::map<uint64_t, Sealed> large_sealed_;  // segment -> totals
  std::set<uint64_t> relocated_;             // relocated, awaiting release
  std::atomic<uint64_t> compaction_micros_{0};
  std::atomic<uint64_t> compactions_{0}, compaction_bytes_{0},
      gc_relocated_bytes_{0}, gc_freed_segments_{0};
  std::atomic<uint64_t> l0s_merged_{0}, l0_merges_{0};
  // EstimateShadowedBytes summed since the last merge into the last level.
  std::atomic<uint64_t> shadowed_bytes_{0};
  std::atomic<uint64_t> compaction_read_bytes_{0}, medium_log_bytes_{0},
      gc_read_bytes_{0};
  mutable std::atomic<uint64_t> value_read_bytes_{0};  // const readers count
  std::atomic<uint64_t> level_read_bytes_[kStatsLevels] = {};
  std::atomic<uint64_t> level_written_bytes_[kStatsLevels] = {};

  std::atomic<uint64_t> puts_{0}, deletes_{0}, gets_{0}, stalls_{0},
      stall_micros_{0}, budget_stalls_{0};
  LoadSample load_sample_;  // keys of recent requests, for LoadSplitKey
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_REGION_H_
