// Engine: one volume and every region on it.
//
// Opens or creates the volume, keeps the registry of regions by name in the
// volume catalog, and runs the background flusher that bounds how long an
// acknowledged write stays volatile under sync=false.
//
// Catalog entries owned here:
//
// | key                  | value                                |
// |----------------------|--------------------------------------|
// | engine/next_region   | fixed64: the next region identifier  |
// | names/<region name>  | fixed64: the region's identifier     |
//
// Thread safety: all methods may be called concurrently. Region pointers
// stay valid until the region is dropped or the engine is destroyed.

#ifndef KVS_ENGINE_ENGINE_H_
#define KVS_ENGINE_ENGINE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>

#include "alloc/volume.h"
#include "io/file.h"
#include "io/sync_group.h"
#include "lsm/l0_budget.h"
#include "lsm/node_cache.h"
#include "lsm/record_reader.h"
#include "lsm/region.h"
#include "lsm/replication_tap.h"
#include "lsm/value_cache.h"
#include "util/status.h"
#include "util/thread_pool.h"

namespace kvs::engine {

struct EngineOptions {
  // true: a write returns after its log record is durable. false: it is
  // durable within flush_interval_ms; Region::Sync forces it sooner.
  bool sync = false;
  uint32_t flush_interval_ms = 50;
  bool direct_io = true;
  // Threads running compactions for every region of the volume.
  unsigned compaction_threads = 2;
  // Memory for the caches plus every region's L0s (active and immutable).
  // The caches get cache_share of it -- the node cache all of it but
  // value_cache_share, which the value cache (lsm/value_cache.h) gets; the
  // rest bounds the L0s: when they exceed it, the maintenance thread
  // switches the largest L0 early, so the L0s return under their share
  // within flush_interval_ms.
  size_t memory_budget_bytes = 256ull << 20;
  double cache_share = 0.5;
  // The value cache's share of the cache memory at start; with
  // adaptive_cache_split, the maintenance thread moves it (every
  // cache_split_interval_ms) toward the cache whose ghost list (what it
  // evicted lately) is missed more: lsm/cache_split.h.
  double value_cache_share = 0.4;
  bool adaptive_cache_split = true;
  uint32_t cache_split_interval_ms = 1000;
  alloc::VolumeOptions volume;
  lsm::RegionOptions region;
  log::LogWriterOptions log;
};

// Counters of the whole engine (monitoring): the node cache and the L0s'
// share of the memory budget. Cache counters only grow; the rest is now.
struct EngineStats {
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;
  uint64_t cache_bytes = 0;                 // nodes cached now
  uint64_t cache_capacity_bytes = 0;        // the cache's share of the budget
  uint64_t node_cache_capacity_bytes = 0;   // of it, the node cache's now
  uint64_t value_cache_capacity_bytes = 0;  // and the value cache's
  uint64_t cache_split_moves = 0;  // times the adaptive split moved memory
  uint64_t l0_bytes = 0;           // every region's L0s, now
  uint64_t l0_budget_bytes = 0;    // the L0s' share of the budget
};

class Engine {
 public:
  // Opens the volume at `path` (a file or block device), formatting it first
  // if `create_if_missing`, it is a regular file and it holds no volume: it
  // is empty, or both superblock blocks are zeros (formatting was cut short
  // by a crash before it published the volume). Damaged superblocks are
  // Corruption, never reformatted.
  static Status Open(const std::string& path, const EngineOptions& options,
                     bool create_if_missing, std::unique_ptr<Engine>* engine);
  // Same, on an already opened device, treated as a regular file (tests use
  // an in-memory one).
  static Status Open(std::unique_ptr<io::File> file,
                     const EngineOptions& options, bool create_if_missing,
                     std::unique_ptr<Engine>* engine);

  ~Engine();  // stops the flusher, syncs and closes every open region
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Opening, reopening and dropping one region wait for each other; those of
  // different regions run side by side (only their bookkeeping holds the
  // engine's lock).
  //
  // NOT_FOUND if no region has this name; BUSY-free: opening an open region
  // returns the same one.
  Status OpenRegion(std::string_view name, lsm::Region** region);
  // INVALID_ARGUMENT if the name is taken or malformed (1..255 bytes).
  Status CreateRegion(std::string_view name, lsm::Region** region);
  // Removes the region and frees its space. The region must not be in use.
  Status DropRegion(std::string_view name);
  // Splits region `name` at `split_key` into two new regions: `lower` serves
  // its keys below the key, `upper` those at or above it. No data is
  // copied and nothing merged: the region's logs are ended
  // (Region::PrepareSplit), then one metadata batch -- the split's commit
  // point, so a crash leaves either the region or both daughters -- hands
  // its levels and both logs' segments to both daughters (a reference each,
  // lsm/region.h "Split") and renames it away; its L0s go to both
  // daughters in memory, each merging its share once open.
  // The daughters are open when this returns (`*lower_region`,
  // `*upper_region`; null if opening one failed after the commit: its
  // error is returned, and OpenRegion tries again). The region must not be
  // in use; it is gone once the split committed. INVALID_ARGUMENT for a
  // key outside the region's bounds (or at its lower bound), a daughter
  // name that is taken or malformed; NOT_FOUND for no region `name`; a
  // failed PrepareSplit's error (NoSpace, a stopped region's), with the
  // region left open and whole. A region holding a Send-Index replica splits
  // its replica (engine_split.cc); the daughters resume the
  // streams of the primary's daughters. A primary's daughters inherit
  // their incarnations from the parent's (lsm::Region::DaughterIncarnation).
  Status SplitRegion(std::string_view name, std::string_view split_key,
                     std::string_view lower, std::string_view upper,
                     lsm::Region** lower_region, lsm::Region** upper_region);
  // Closes region `name` (waiting for its compaction, syncing its logs),
  // runs `while_closed` with its id, then opens it again, replaying its
  // logs. The region must not be in use: its old object is gone. Opened
  // again even if `while_closed` fails (whose error is returned); null
  // `*region` if that open fails.
  Status ReopenRegion(std::string_view name,
                      const std::function<Status(uint64_t id)>& while_closed,
                      lsm::Region** region);
  // The id of region `name`, if it exists.
  std::optional<uint64_t> RegionId(std::string_view name) const;
  // Names of every region on the volume.
  std::vector<std::string> ListRegions() const;

  alloc::Volume* volume() const { return volume_.get(); }

  // Thread-safe; a handful of relaxed loads and one pass over the cache's
  // shards (each locked briefly).
  EngineStats Stats() const;

  // Sends every region's replication events to `tap` (not owned; null:
  // nowhere), from now on. Returns once no event is being delivered to the
  // tap it replaces, which may then be destroyed.
  void SetReplicationTap(lsm::ReplicationTap* tap);

 private:
  Engine(const EngineOptions& options, std::unique_ptr<alloc::Volume> volume);
  // Runs every flush_interval_ms: flushes logs (sync=false) and keeps the
  // L0s within their share of the memory budget.
  void MaintenanceLoop();
  // Moves cache memory between the node and value caches by their ghost
  // hits since the last call (maintenance thread).
  void BalanceCaches();
  // Gives the value cache `share` of the cache memory, the node cache the
  // rest, each with a ghost list of a quarter of the cache memory.
  void SplitCache(double share);
  void EnforceL0Budget();
  lsm::RegionContext Context() const;
  // Delivers one event to the tap, if there is one.
  template <typename Event>
  void Tap(const Event& event) const;

  const EngineOptions options_;
  const std::unique_ptr<alloc::Volume> volume_;
  io::SyncGroup sync_group_;
  lsm::NodeCache nodes_;
  lsm::ValueCache values_;
  lsm::RecordReader records_;
  lsm::L0Budget l0_budget_;
  // Declared before regions_, so destroyed after them: each region waits
  // for its own compaction in its destructor, then the pool stops.
  ThreadPool compactions_;

  mutable std::shared_mutex tap_mutex_;  // held shared while delivering
  lsm::ReplicationTap* tap_ = nullptr;
  std::atomic<bool> tapped_{false};

  // Waits (holding `lock` on mutex_ between checks) until no open, reopen or
  // drop of region `name` is under way.
  void AwaitSettled(std::unique_lock<std::mutex>& lock, std::string_view name);
  // Begins a change of `name` (held: mutex_): enters it in changing_ and
  // takes its open object, if any, out of regions_.
  std::unique_ptr<lsm::Region> BeginChange(std::string_view name);
  // Ends the change of `name` begun under mutex_ (its entry in changing_).
  void EndChange(std::string_view name, std::unique_ptr<lsm::Region> opened);
  // Whether region `id` holds a Send-Index backup's replica.
  bool HoldsReplica(uint64_t id) const;
  // SplitRegion's metadata batch, from the closed region `id`'s catalog
  // entries; `*lower_id` and `*upper_id` are the daughters' ids.
  Status BuildSplitBatch(std::string_view name, uint64_t id,
                         const lsm::RegionOrigin& origin,
                         std::string_view split_key, std::string_view lower,
                         std::string_view upper, alloc::MetadataBatch* batch,
                         uint64_t* lower_id, uint64_t* upper_id) const;

  mutable std::mutex mutex_;  // guards regions_ and changing_
  std::map<std::string, std::unique_ptr<lsm::Region>, std::less<>> regions_;
  // Regions being opened, reopened or dropped: their slow steps (replaying
  // logs, syncing, adopting a replica) run outside mutex_, so that a server
  // promoting several regions at once does them side by side and the
  // flusher is not held up; a region in here is in no other thread's hands.
  std::set<std::string, std::less<>> changing_;
  std::condition_variable settled_;  // signalled when changing_ loses one

  std::mutex maintenance_mutex_;
  std::condition_variable maintenance_wakeup_;
  bool stopping_ = false;
  std::thread maintenance_;
  // The adaptive cache split's state (maintenance thread only).
  double value_share_ = 0;
  uint64_t node_ghost_hits_seen_ = 0;
  uint64_t value_ghost_hits_seen_ = 0;
  std::chrono::steady_clock::time_point split_checked_;
  std::atomic<uint64_t> cache_split_moves_{0};
};

}  // namespace kvs::engine

#endif  // KVS_ENGINE_ENGINE_H_
