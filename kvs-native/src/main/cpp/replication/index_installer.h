// IndexInstaller: a backup's end of Send-Index for one region (Tebis §3.3).
//
// The primary ships every index segment of a compaction's output as it
// finishes it (ReceiveSegment, tagged with the level the compaction
// installs: two compactions of a region may run at once, the merge of L0s
// into L1 and the drain below it), then says which level it installed
// (Install). An install of the very descriptor of the level it empties is a
// rename (L1 becoming the draining level): nothing is shipped for it. Each
// shipped segment gets a segment of the backup's own, reserved the first time
// anything names it (a leaf's next-leaf pointer may name a segment not shipped
// yet). Its nodes' pointers are rewritten -- value-log pointers through the log
// mirrors, child and next-leaf pointers through this compaction's segment map
// (btree::RewriteNodePointers) -- and it is written; the Bloom filter bytes
// after the nodes are copied as they are. Install translates the level's
// descriptor, makes the new segments durable and commits, in one metadata
// batch, their allocation, the level's catalog entry (the key any region uses,
// so a promoted backup opens its levels as a region does) and the release of
// the index segments of the level it replaces and of the level merged into it.
// The backup itself never compacts.
//
// Value pointers are looked up in the large log's copies, then the medium
// log's: a primary segment number must name at most one live copy, so the
// primary trims a segment's copies (LogMirror::Trim) before it reuses the
// segment in any log.
//
// Errors: a shipment that is not well formed -- a node that fails
// validation, bytes that are neither nodes nor the Bloom filter after them,
// a filter that does not load, a pointer into a segment the backup has no
// copy of, a root outside the shipped nodes -- is refused and the
// compaction's segments returned; nothing is installed until every segment
// of the level arrived whole. How the nodes link up (child levels, key
// ranges, the next-leaf chain) is checked by readers, which answer
// Corruption, never a wrong value (btree/tree_reader.h).
//
// Thread safety: not thread-safe (one caller per region); at most one
// compaction in progress per level.

#ifndef KVS_REPLICATION_INDEX_INSTALLER_H_
#define KVS_REPLICATION_INDEX_INSTALLER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "alloc/volume.h"
#include "lsm/level.h"
#include "replication/log_mirror.h"
#include "util/status.h"

namespace kvs::replication {

// A digest of a primary's level descriptor (its encoding): equal digests,
// within one lineage of the primary's region (lsm::Region::incarnation),
// mean the same level.
uint64_t PrimaryLevelHash(const lsm::LevelDescriptor& primary);

struct InstallerStats {
  uint64_t segments = 0;  // shipped segments written
  uint64_t nodes = 0;     // nodes rewritten
  uint64_t pointers = 0;  // pointers translated
  uint64_t levels = 0;    // levels installed
};

class IndexInstaller {
 public:
  // Where value-log pointers go: the copies of the primary's large log and
  // of its medium log (either may be null if the region has none).
  struct LogMaps {
    const LogMirror* large = nullptr;
    const LogMirror* medium = nullptr;
  };

  // Loads the levels installed before from `volume`'s catalog.
  static Status Open(alloc::Volume* volume, uint64_t region_id, LogMaps logs,
                     std::unique_ptr<IndexInstaller>* installer);
  // Returns the segments reserved for a compaction that never installed.
  ~IndexInstaller();
  IndexInstaller(const IndexInstaller&) = delete;
  IndexInstaller& operator=(const IndexInstaller&) = delete;

  // One index segment of the compaction in progress that installs `level`:
  // `bytes` from its offset 0 (nodes, then possibly Bloom filter bytes).
  Status ReceiveSegment(size_t level, uint64_t primary_segment,
                        std::string_view bytes);

  // The primary installed `primary` (its offsets) at `level` (0 is L1) and
  // emptied level `emptied`, if any, and every write at or below
  // `compacted_lsn` is in its levels now (committed with the level as the
  // region's own, Region::StateCatalogKey, so a promoted backup replays
  // only what came after). `*installed` (optional) receives the backup's
  // descriptor.
  Status Install(size_t level, const lsm::LevelDescriptor& primary,
                 std::optional<size_t> emptied, uint64_t compacted_lsn,
                 lsm::LevelDescriptor* installed);

  // Forgets every installed level (and the compactions in progress), freeing
  // their index segments: the primary ships its whole state again.
  Status Clear();

  // The installed levels, in backup offsets, by level.
  const std::map<size_t, lsm::LevelDescriptor>& levels() const {
    return levels_;
  }
  // Per installed level, PrimaryLevelHash of the primary's descriptor it
  // was installed from (persisted with it, so a catch-up can tell what the
  // backup holds already).
  const std::map<size_t, uint64_t>& primary_hashes() const {
    return primary_hashes_;
  }
  InstallerStats stats() const { return stats_; }
  // The compacted LSN of the installed levels (0: none installed).
  uint64_t compacted_lsn() const { return compacted_lsn_; }

 private:
  IndexInstaller(alloc::Volume* volume, uint64_t region_id, LogMaps logs);
  // A compaction in progress: primary -> backup index segments, and which
  // of them arrived; per received segment, where its nodes end (Bloom
  // filter bytes may follow) and where its last non-zero byte ends.
  struct Layout {
    uint64_t nodes_end = 0;
    uint64_t data_end = 0;
  };
  struct Pending {
    std::map<uint64_t, uint64_t> index_map;
    std::set<uint64_t> received;
    std::map<uint64_t, Layout> layouts;
  };
  // The backup segment for primary index segment `primary`, reserved now
  // if nothing named it before.
  Status IndexSegment(Pending& pending, uint64_t primary, uint64_t* backup);
  Status TranslateIndexOffset(Pending& pending, uint64_t primary_offset,
                              uint64_t* backup);
  // Where the nodes of received segment `primary` end (0: not received).
  static uint64_t NodesEnd(const Pending& pending, uint64_t primary);
  Status TranslateLogOffset(uint64_t primary_offset, uint64_t* backup) const;
  // Renames installed level `from` into `to` (the primary renamed it).
  Status Move(size_t from, size_t to, uint64_t compacted_lsn,
              lsm::LevelDescriptor* installed);
  // Unreserves the segments of the compaction installing `level` (of
  // every compaction: Abandon()) and forgets them.
  void Abandon(size_t level);
  void Abandon();

  alloc::Volume* const volume_;
  const uint64_t region_id_;
  const LogMaps logs_;
  uint64_t compacted_lsn_ = 0;
  std::map<size_t, lsm::LevelDescriptor> levels_;
  std::map<size_t, uint64_t> primary_hashes_;
  // By the level each installs.
  std::map<size_t, Pending> pending_;
  InstallerStats stats_;
};

}  // namespace kvs::replication

#endif  // KVS_REPLICATION_INDEX_INSTALLER_H_
