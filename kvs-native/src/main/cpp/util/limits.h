// Every size, count and timeout of the engine in one place, each with its
// unit last in the name and a comment on why it has that value.

#ifndef KVS_UTIL_LIMITS_H_
#define KVS_UTIL_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace kvs::limits {

// --- Device layout ---------------------------------------------------------

// The unit of allocation (Parallax, Tebis): large enough that per-segment
// metadata stays tiny (a 4 TiB volume has 2 Mi segments), small enough that a
// region's partly used tail segments waste little.
inline constexpr uint64_t segment_size_bytes = 2ull << 20;
inline constexpr unsigned segment_offset_bits = 21;
static_assert(segment_size_bytes == (1ull << segment_offset_bits));

// Alignment and granularity of direct I/O: the logical block size of every
// device we target (NVMe, SATA SSD, and files on ext4/xfs).
inline constexpr uint64_t io_alignment_bytes = 4096;
static_assert(segment_size_bytes % io_alignment_bytes == 0);

// --- Keys and values ---------------------------------------------------------

// Documented limits: keys up to 4 KiB and values up to 1 MiB; beyond them an
// operation fails with TOO_LARGE. A key must fit a B+-tree index node with
// room for at least a few pivots; a value must fit one log segment with its
// record header.
inline constexpr size_t key_size_bytes_max = 4096;
inline constexpr size_t value_size_bytes_max = 1u << 20;
static_assert(key_size_bytes_max + value_size_bytes_max + 64 <
              segment_size_bytes);

// An atomic batch (lsm::Region::WriteBatch, the wire's BATCH): at most this
// many writes, of at most this many key and value bytes together (one
// largest pair fits); beyond either it fails with TOO_LARGE and writes
// nothing. Its replication record must fit one replica buffer
// (replication_format.h, 2 MiB), with room for every record's overhead.
inline constexpr size_t batch_writes_max = 1024;
inline constexpr size_t batch_bytes_max =
    value_size_bytes_max + key_size_bytes_max;

// --- Replication -------------------------------------------------------------

// A catch-up reads the region's segments from the device as its stream sends
// them: at most this much read and not yet sent per stream (a few segments,
// enough to keep a fast link busy while the next is read), so a catch-up of
// any size holds a bounded amount of memory.
inline constexpr uint64_t catch_up_read_ahead_bytes = 8ull << 20;
static_assert(catch_up_read_ahead_bytes >= 2 * segment_size_bytes);

// What one stream may hold queued for its backup, in both replication modes
// (Build-Index records, Send-Index log bytes and index segments; a
// catch-up's live writes queue behind it; a backup that cannot keep up, or
// never answers its OPEN, makes them pile up): past this the stream fails,
// its backup joins again later, and writes stop waiting for it once the
// master has marked it joining. Large enough for a few seconds of a fast
// primary's writes, so a backup that stalls briefly is not dropped.
// (ReplicatorOptions::stream_queued_bytes_max; tests lower it.)
inline constexpr uint64_t stream_queued_bytes_max = 256ull << 20;

// --- Server threads ----------------------------------------------------------

// A shard never waits: a read that misses the caches, or a write that
// might wait for the engine's compaction, runs on the deferred pool
// (service/region_service.h, io/device_reads.h). Its threads block in pread
// or on the L0, so more than the cores: a few reads in flight keep an SSD's
// queue busy while shards serve what is cached.
inline constexpr unsigned deferred_request_threads = 4;
// Requests waiting for the pool at most; one more runs on its shard,
// blocking it (the device or compaction is the bottleneck then, and the
// shard's other clients wait for it either way).
inline constexpr size_t deferred_requests_max = 1024;

// A region sealed for its split or retired for its merge holds the client
// requests that reach it (service/held_requests.h) this long at most: its
// split's commit and its daughters' opens take tens of milliseconds; a
// hold that ends (the master failed between seal and commit) refuses them
// WRONG_REGION as before. Below the client's patience with a write whose
// region moved (1 s), so a held write is answered, not given up on.
inline constexpr uint32_t sealed_hold_ms = 500;
// Requests held so at once, on the whole server; one more is refused
// WRONG_REGION at once (its client refreshes its map and retries).
inline constexpr size_t held_requests_max = 4096;
// Regions split or merged here whose successors a request addressed to
// them is redirected to (RegionService::TakeOver); the oldest is forgotten
// beyond this (its requests are refused WRONG_REGION, as before).
inline constexpr size_t region_successors_max = 4096;

// --- Verification --------------------------------------------------------

// A Send-Index backup's digest (replication/replica_digest.h) holds, for
// every log record past its levels, the record's key, LSN and hash in
// memory until it has replayed them in LSN order: at most this much. What
// lies past the levels is about what its primary holds in L0 (two L0s of
// 64 MiB by default, of which the keys are a part), so a digest of a
// healthy replica stays well inside it; past it the digest fails (BUSY)
// rather than grow, and succeeds once a compaction has moved the records
// into the levels.
inline constexpr uint64_t replica_digest_records_bytes_max = 256ull << 20;

// The write ids (client, sequence) of its recent conditional writes a region
// remembers, so that a retry is answered as the first attempt was
// (lsm::WriteIds): about 64 bytes each, 4 MiB per region at most. The
// oldest goes when one more comes, and a retry that could be of a forgotten
// one is answered that its outcome is unknown.
inline constexpr size_t write_ids_per_region_max = 65536;

}  // namespace kvs::limits

#endif  // KVS_UTIL_LIMITS_H_
