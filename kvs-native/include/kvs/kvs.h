// The C ABI of libkvs: the one door into the native data plane.
//
// Everything outside kvs-native/src/main/cpp (the JNI layer, native tools,
// fuzzers, benchmarks) calls the library through this header only. It is
// plain C so that any language can bind it and so that no C++ exception or
// type crosses the boundary.
//
// Error convention: functions that can fail return a kvs_status. On failure
// kvs_last_error_message() returns a message for the calling thread, valid
// until that thread's next call into the library.
//
// Thread safety: every function here may be called from any thread at once.

#ifndef KVS_KVS_H_
#define KVS_KVS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KVS_EXPORT __attribute__((visibility("default")))

// Bumped whenever a function's signature or a constant's meaning changes.
#define KVS_ABI_VERSION 1

// Status codes. The values are stable: the Java enum io.kvs.core.StatusCode
// and the wire protocol use the same numbers.
typedef enum kvs_status {
  KVS_OK = 0,
  KVS_NOT_FOUND = 1,         // key, region or file does not exist
  KVS_CORRUPTION = 2,        // checksum or format check failed; never served
  KVS_IO_ERROR = 3,          // the OS reported an I/O error (incl. full disk)
  KVS_INVALID_ARGUMENT = 4,  // argument outside documented bounds
  KVS_BUSY = 5,              // temporarily unable; retry later
  KVS_CLOSED = 6,            // handle already closed
  KVS_TOO_LARGE = 7,         // key or value above the documented limit
  KVS_INTERNAL = 8,          // broken invariant inside the library
  // Routing and load statuses of the wire protocol (docs/PROTOCOL.md).
  KVS_NOT_PRIMARY = 9,    // the server holds the region, but not as primary
  KVS_WRONG_REGION = 10,  // the server does not hold the region / key
  KVS_STALE_EPOCH = 11,   // the request's region epoch is not current
  KVS_OVERLOADED = 12,    // the server sheds load; retry later
  // Fewer replicas of the region are in sync than its minimum: the write
  // was refused before it applied; retry later.
  KVS_NOT_ENOUGH_REPLICAS = 13,
  // Not a status: makes the type hold every int32 value, so that a code
  // from a newer peer (kvs_status_name: "UNKNOWN") is a value of it.
  KVS_STATUS_INT32_MAX_ = 0x7fffffff,
} kvs_status;

// The library version, e.g. "0.1.0-SNAPSHOT". Static storage; never NULL.
KVS_EXPORT const char* kvs_version(void);

// KVS_ABI_VERSION as compiled into the library.
KVS_EXPORT uint32_t kvs_abi_version(void);

// One line describing the build: compiler, build type, sanitizers, CPU
// features in use. Static storage; never NULL.
KVS_EXPORT const char* kvs_build_info(void);

// The constant's name without prefix, e.g. "CORRUPTION"; "UNKNOWN" for a
// value this version does not define.
KVS_EXPORT const char* kvs_status_name(kvs_status status);

// CRC32C (Castagnoli, reflected polynomial 0x82F63B78, as in iSCSI and
// ext4): extends `crc`, the checksum of some preceding bytes (0 for none),
// with `size` bytes at `data`. kvs_crc32c_extend(0, d, n) is the checksum
// of d[0..n). `data` may be NULL only when `size` is 0.
KVS_EXPORT uint32_t kvs_crc32c_extend(uint32_t crc, const void* data,
                                      size_t size);

// 1 when kvs_crc32c_extend uses the CPU's CRC32C instruction, else 0.
KVS_EXPORT int kvs_crc32c_is_hardware_accelerated(void);

// The message of the calling thread's last failed call; "" if none.
KVS_EXPORT const char* kvs_last_error_message(void);

// ---------------------------------------------------------------------------
// Storage engine. An engine is one volume (a file or block device) holding
// many regions; a region is one key range's LSM tree. Keys are 1..4096
// bytes, values 0..1048576 bytes; larger ones fail with KVS_TOO_LARGE.

typedef struct kvs_engine kvs_engine;
typedef struct kvs_region kvs_region;

typedef struct kvs_engine_options {
  int sync;                      // 1: writes return once durable
  uint32_t flush_interval_ms;    // sync == 0: writes durable within this
  int direct_io;                 // 1: bypass the page cache (O_DIRECT)
  uint64_t l0_size_bytes;        // per-region in-memory level size
  uint32_t growth_factor;        // size ratio between device levels
  uint32_t small_kv_bytes_max;   // KV pairs up to this size are small
  uint32_t medium_kv_bytes_max;  // up to this: medium; above: large
  uint64_t memory_budget_bytes;  // node cache + every region's L0s
} kvs_engine_options;

// Fills `options` with the defaults.
KVS_EXPORT void kvs_engine_options_init(kvs_engine_options* options);

// Opens the volume at `path`; with `create_if_missing`, formats a missing or
// empty regular file first, or one whose formatting a crash interrupted (its
// superblock blocks, the first 8 KiB, are still zeros).
KVS_EXPORT kvs_status kvs_engine_open(const char* path,
                                      const kvs_engine_options* options,
                                      int create_if_missing,
                                      kvs_engine** engine);
// Syncs and closes every region, then the volume. Region handles of this
// engine become invalid.
KVS_EXPORT void kvs_engine_close(kvs_engine* engine);

// Counters of the whole engine: node cache hits and misses (they only
// grow), the bytes cached now and the cache's share of the memory budget,
// every region's L0 bytes now and the L0s' share of the budget.
typedef struct kvs_engine_stats {
  uint64_t cache_hits, cache_misses;
  uint64_t cache_bytes, cache_capacity_bytes;
  uint64_t l0_bytes, l0_budget_bytes;
} kvs_engine_stats;
KVS_EXPORT void kvs_engine_get_stats(const kvs_engine* engine,
                                     kvs_engine_stats* stats);

// Region handles stay valid until the region is dropped or the engine is
// closed; they need no closing of their own.
KVS_EXPORT kvs_status kvs_region_create(kvs_engine* engine, const char* name,
                                        size_t name_size, kvs_region** region);
KVS_EXPORT kvs_status kvs_region_open(kvs_engine* engine, const char* name,
                                      size_t name_size, kvs_region** region);
KVS_EXPORT kvs_status kvs_region_drop(kvs_engine* engine, const char* name,
                                      size_t name_size);
// Splits region `name` at `split_key` into new regions `lower` (its keys
// below the key) and `upper` (the rest), sharing its segments (no copy);
// the region is gone afterwards and its handle invalid. Both daughters are
// open when this returns (their handles come from kvs_region_open). Nothing
// is merged first: the daughters take its in-memory level and share its
// write-ahead log until each has merged its part. A crash leaves either the
// region or both daughters. KVS_INVALID_ARGUMENT for a key outside the
// region (or at its lower bound) or a daughter name taken; KVS_NOT_FOUND for
// no region `name`; the error that stopped the region, or its logs' if they
// could not be ended (KVS_IO_ERROR on a full device; the region stays
// whole).
KVS_EXPORT kvs_status kvs_region_split(kvs_engine* engine, const char* name,
                                       size_t name_size, const void* split_key,
                                       size_t split_key_size, const char* lower,
                                       size_t lower_size, const char* upper,
                                       size_t upper_size);

KVS_EXPORT kvs_status kvs_put(kvs_region* region, const void* key,
                              size_t key_size, const void* value,
                              size_t value_size);
KVS_EXPORT kvs_status kvs_delete(kvs_region* region, const void* key,
                                 size_t key_size);

// Receives a value found by kvs_get; the bytes are valid during the call.
typedef void (*kvs_value_sink)(void* context, const void* value, size_t size);
// KVS_NOT_FOUND if the key has no value; otherwise calls `sink` once.
KVS_EXPORT kvs_status kvs_get(kvs_region* region, const void* key,
                              size_t key_size, kvs_value_sink sink,
                              void* sink_context);

// Writes `value` under `key` (with `value` NULL: deletes it) if the key
// holds `expected` (with `expected` NULL: holds no value), atomically: no
// kvs_put, kvs_delete, kvs_compare_and_set or kvs_increment of the key
// comes between what it reads and what it writes (a region attached to the
// server's service is written through the service instead, which orders its
// own writes). `*applied` is 1 if it wrote, else 0 and `sink` (may be NULL)
// gets the value the key held -- it is not called when the key held none.
// KVS_INVALID_ARGUMENT or KVS_TOO_LARGE for sizes past the limits.
KVS_EXPORT kvs_status kvs_compare_and_set(kvs_region* region, const void* key,
                                          size_t key_size, const void* expected,
                                          size_t expected_size,
                                          const void* value, size_t value_size,
                                          int* applied, kvs_value_sink sink,
                                          void* sink_context);
// Adds `delta` to the 8-byte little-endian signed counter under `key` (no
// value counts as 0), atomically as kvs_compare_and_set; `*counter` gets
// the sum. KVS_INVALID_ARGUMENT, writing nothing, for a value that is not 8
// bytes or a sum past 64 bits.
KVS_EXPORT kvs_status kvs_increment(kvs_region* region, const void* key,
                                    size_t key_size, int64_t delta,
                                    int64_t* counter);

// Makes every write acknowledged so far durable.
KVS_EXPORT kvs_status kvs_region_sync(kvs_region* region);

// Merges the writes made so far into the region's levels while it keeps
// serving (writes go on into a new L0), waiting at most `wait_ms`: what a
// primary does before it hands its leadership over, so that the new
// primary replays few log records. `*merged` is 1 if every write before
// the call was merged in time, 0 if not (the merge goes on). Nothing
// changes what the region holds.
KVS_EXPORT kvs_status kvs_region_merge_ahead(kvs_region* region,
                                             uint64_t wait_ms, int* merged);

// Where the region splits by size, without a scan of its levels (about
// half of the region's bytes lie below the key; each level's share read
// from its index). KVS_NOT_FOUND if the index cannot say (L0 holds more
// than the levels, or they hold no key inside the bounds); otherwise calls
// `sink` once with the key.
KVS_EXPORT kvs_status kvs_region_split_key(kvs_region* region,
                                           kvs_value_sink sink,
                                           void* sink_context);

// Where the region splits by load: the median of the keys its recent
// requests named (one put, delete or get in 16; the last 1,024 kept) that
// its bounds split at. KVS_NOT_FOUND with fewer than 64 such keys;
// otherwise calls `sink` once with the key.
KVS_EXPORT kvs_status kvs_region_load_split_key(kvs_region* region,
                                                kvs_value_sink sink,
                                                void* sink_context);

// Iterators scan a snapshot of a region's live keys in order. An iterator
// must be destroyed before its engine is closed or its region dropped.
typedef struct kvs_iterator kvs_iterator;
// `upper_bound` (exclusive) may be NULL for no bound.
KVS_EXPORT kvs_status kvs_iterator_create(kvs_region* region,
                                          const void* upper_bound,
                                          size_t upper_bound_size,
                                          kvs_iterator** iterator);
KVS_EXPORT void kvs_iterator_destroy(kvs_iterator* iterator);
KVS_EXPORT void kvs_iterator_seek_to_first(kvs_iterator* iterator);
KVS_EXPORT void kvs_iterator_seek(kvs_iterator* iterator, const void* key,
                                  size_t key_size);
// 1 if positioned at a key, 0 at the end or after an error.
KVS_EXPORT int kvs_iterator_valid(const kvs_iterator* iterator);
KVS_EXPORT void kvs_iterator_next(kvs_iterator* iterator);
// The current key; valid until the iterator moves.
KVS_EXPORT void kvs_iterator_key(const kvs_iterator* iterator, const void** key,
                                 size_t* key_size);
// Calls `sink` with the current value.
KVS_EXPORT kvs_status kvs_iterator_value(const kvs_iterator* iterator,
                                         kvs_value_sink sink,
                                         void* sink_context);
// Receives one pair of kvs_iterator_read_pairs; the bytes are valid during
// the call.
typedef void (*kvs_pair_sink)(void* context, const void* key, size_t key_size,
                              const void* value, size_t value_size);
// Reads the pairs from the current position on, in key order, and moves past
// them: at most `limit` pairs, stopping once their keys and values reach
// `max_bytes` (at least one pair while the iterator is valid). The values
// stored behind log pointers are read as one batch of concurrent device
// reads, so a scan costs about one device latency per call instead of one per
// value. Calls `sink` for every pair; on an error, no pair is delivered.
KVS_EXPORT kvs_status kvs_iterator_read_pairs(kvs_iterator* iterator,
                                              size_t limit, size_t max_bytes,
                                              kvs_pair_sink sink,
                                              void* sink_context);
// KVS_OK, or the error that ended the scan.
KVS_EXPORT kvs_status kvs_iterator_status(const kvs_iterator* iterator);

// Per-level statistics cover L1..L8; deeper levels count into the last slot.
#define KVS_STATS_LEVELS 8

typedef struct kvs_region_stats {
  uint64_t puts, deletes, gets;
  uint64_t l0_bytes, l0_entries;
  uint64_t stalls, stall_micros;
  uint64_t small_log_bytes, large_log_bytes;
  uint64_t last_lsn;
  uint64_t compactions, compaction_bytes_written;
  uint64_t level_count;
  // Of a split region, the part inside its bounds (estimated).
  uint64_t level_kv_bytes;
  uint64_t large_garbage_bytes;
  uint64_t gc_relocated_bytes, gc_freed_segments, large_log_segments;
  // Device bytes by cause: compaction inputs read, medium-log bytes written,
  // log records read by gets and scans, large-log segments read by GC.
  uint64_t compaction_bytes_read, medium_log_bytes, value_bytes_read;
  uint64_t gc_bytes_read;
  // What compactions into level i+1 read (both inputs) and wrote.
  uint64_t level_bytes_read[KVS_STATS_LEVELS];
  uint64_t level_bytes_written[KVS_STATS_LEVELS];
  // What opening the region recovered: writes replayed from its logs, and
  // writes dropped past the first LSN missing from both logs (point-in-time
  // recovery; that LSN, or 0), and how long the replay took.
  uint64_t recovery_replayed_writes, recovery_dropped_writes;
  uint64_t recovery_cut_lsn, recovery_micros;
  // Wall time of the compactions counted (from start to install).
  uint64_t compaction_micros;
  // Segments of its levels and large log another region holds too (the
  // sibling of a split). Its level_kv_bytes count only its own part of
  // such levels (an estimate from their index: TreeReader::EstimateFraction).
  uint64_t shared_segments;
  // Key and value bytes written into its L0 since its last merge into the
  // levels (l0_bytes is the memory L0 takes: large values stay in the log).
  uint64_t l0_kv_bytes;
} kvs_region_stats;
KVS_EXPORT void kvs_region_get_stats(kvs_region* region,
                                     kvs_region_stats* stats);
// Why the region stopped (a compaction failed; its writes are refused from
// then on): copies up to `capacity` bytes of the text into `message` and
// returns its whole length; 0 while it works.
KVS_EXPORT size_t kvs_region_stopped_by(kvs_region* region, char* message,
                                        size_t capacity);

// A digest of the logical contents a replica of a region serves (or, for a
// send-index backup, would serve if promoted): its live pairs in key order,
// however stored, so that equal digests mean the same pairs; and counts
// saying how much the comparison covered (docs/OPERATIONS.md, "Verifying
// replicas").
typedef struct kvs_contents_digest {
  uint64_t digest;
  uint64_t pairs;        // live pairs
  uint64_t level_pairs;  // live pairs of the device levels alone
  uint64_t levels;       // non-empty device levels
  // Past the levels: a region's L0 entries, or the log records a
  // send-index backup replayed over its levels.
  uint64_t past_levels;
  // A backup's log records past the first LSN missing from its logs (a
  // promotion drops them); 0 for a region.
  uint64_t dropped;
  uint64_t last_lsn;       // the last LSN served
  uint64_t compacted_lsn;  // every LSN up to it is in the levels
} kvs_contents_digest;
// What `region` serves now: its L0s and device levels (read from a
// snapshot; safe while it serves).
KVS_EXPORT kvs_status kvs_region_contents_digest(kvs_region* region,
                                                 kvs_contents_digest* digest);

// --- The fabric transport (docs/PROTOCOL.md, "Fabric messages"). ----------
// Needs libfabric at run time (opened on first use); without it these
// functions fail with KVS_NOT_FOUND and a message saying what to install.

typedef struct kvs_fabric_options {
  const char* provider;   // "shm", "tcp" or "verbs"
  const char* node;       // tcp, verbs: local address to bind ("" = any)
  const char* host;       // server: bootstrap listen address
  uint16_t port;          // server: bootstrap port (0 = any free one)
  uint32_t workers;       // server: worker threads
  uint32_t buffer_bytes;  // client: request and reply buffer size each
  uint32_t timeout_ms;    // client: a request without reply fails after this
  // The cluster secret (16..1024 bytes; NULL/0: none). A server requires
  // peers (primaries replicating to it) to prove it in the bootstrap, and
  // its replication connections prove it to backups. Clients ignore it.
  // Copied: need not outlive the call.
  const void* secret;
  uint32_t secret_bytes;
  // The client secret (16..1024 bytes; NULL/0: none). A server requires
  // clients to prove it; a client proves it and requires the server to
  // prove it back. It never lets a connection replicate (docs/OPERATIONS.md,
  // "Security").
  const void* client_secret;
  uint32_t client_secret_bytes;
} kvs_fabric_options;

// Fills `options` with the defaults (shm, 127.0.0.1, 2 workers, 256 KiB
// buffers, 5000 ms, no secrets).
KVS_EXPORT void kvs_fabric_options_init(kvs_fabric_options* options);

// A service answering wire-protocol requests (docs/PROTOCOL.md) from
// attached regions, for every transport: the fabric server and the client
// door call it natively; kvs_service_handle takes request bytes from any
// other caller.
typedef struct kvs_service kvs_service;
KVS_EXPORT kvs_service* kvs_service_create(void);
// The engine the attached regions live in (it must outlive the service):
// send-index replication taps its regions and keeps the copies of the
// regions this server backs up on its volume. Before a fabric server starts.
KVS_EXPORT void kvs_service_use_engine(kvs_service* service,
                                       kvs_engine* engine);
// Serves `region` as `region_id` at `epoch` until detached; the region must
// stay open meanwhile.
KVS_EXPORT void kvs_service_attach(kvs_service* service, uint64_t region_id,
                                   uint64_t epoch, kvs_region* region);
// A primary's backup: its fabric server's bootstrap host and port, and
// whether it is joining (the master does not count it in sync yet: writes do
// not wait for it until its catch-up is done, which starts afresh).
typedef struct kvs_backup {
  const char* host;
  uint16_t port;
  int joining;
} kvs_backup;
// Where a region sits in the cluster (see kvs_service_attach_placed).
#define KVS_REPLICATION_BUILD_INDEX 0
#define KVS_REPLICATION_SEND_INDEX 1
typedef struct kvs_placement {
  int primary;        // 1: primary; 0: backup (client requests get NOT_PRIMARY)
  const void* start;  // keys in [start, end); keys outside: WRONG_REGION
  size_t start_size;
  const void* end;
  size_t end_size;
  int has_end;  // 0: no end
  const kvs_backup* backups;
  size_t backup_count;
  int mode;  // KVS_REPLICATION_BUILD_INDEX or KVS_REPLICATION_SEND_INDEX
  // A primary's fewest replicas in sync (itself counted) that accept a
  // write; fewer refuse writes with KVS_NOT_ENOUGH_REPLICAS. 0 counts as 1.
  size_t min_replicas;
  // The group's primary server (any id): a backup re-attached at a new
  // epoch under the same primary keeps its stream and what it holds.
  const char* primary_server;
  size_t primary_server_size;
  // A backup the master counts as joining (not in sync): only such a backup
  // lets a new send-index stream start it over; one in sync that holds a
  // replica refuses (it may be promoted, so it must not forget writes).
  int joining;
  // The region's stream key at this epoch (the master gives every member
  // the same): a primary's new replication streams prove it, a backup takes
  // a stream only from a connection that proved it. NULL/0 on a backup: it
  // takes no stream.
  const void* stream_key;
  size_t stream_key_size;
  // 1: the region is meant to have backups (its replication factor is above
  // one), listed or not: while none holds a write (none listed, or all
  // joining) the primary acknowledges it, and answers reads, once what they
  // touch is on its disk. 0 with no backups: unreplicated.
  int replicated;
} kvs_placement;
// Like kvs_service_attach, placed. A primary with backups replicates every
// write to them before answering (docs/ARCHITECTURE.md, "Failure
// recovery"); that needs a fabric server started on the service. Build-index
// mode: records the backups apply; send-index: log segments and compacted
// index segments (needs kvs_service_use_engine on both ends).
// KVS_STALE_EPOCH, nothing changed: a send-index backup not joining under a
// primary whose stream into it was cut here (it must be placed joining; see
// RegionService::Attach).
KVS_EXPORT kvs_status kvs_service_attach_placed(kvs_service* service,
                                                uint64_t region_id,
                                                uint64_t epoch,
                                                kvs_region* region,
                                                const kvs_placement* placement);

// Replication counters of a service since it started: what it sent as a
// primary (to all backups) and did as a backup (for the streams open now).
typedef struct kvs_replication_stats {
  uint64_t log_bytes;            // records or log bytes written one-sidedly
  uint64_t index_bytes;          // index segment bytes written one-sidedly
  uint64_t writes;               // one-sided writes
  uint64_t flushes;              // FLUSH and FLUSH-TAIL messages
  uint64_t index_messages;       // SHIP-SEGMENT and INSTALL-LEVEL messages
  uint64_t index_cpu_ns;         // CPU shipping index segments and levels
  uint64_t backup_tail_bytes;    // log bytes persisted as copies
  uint64_t backup_segments;      // index segments rewritten
  uint64_t backup_levels;        // levels installed
  uint64_t backup_log_cpu_ns;    // CPU persisting log copies
  uint64_t backup_index_cpu_ns;  // CPU on indexes: rewriting, installing
                                 // (send-index); applying records (build-index)
  uint64_t insert_cpu_ns;    // CPU applying client writes to regions (engine
                             // insert), estimated from one write in 16
  uint64_t batches;          // batches the one-sided writes carried (a write
                             // carries those of several regions to one backup)
  uint64_t stream_failures;  // streams to backups that failed (a broken
                             // connection, a refusal, the stall timeout)
} kvs_replication_stats;
KVS_EXPORT void kvs_service_replication_stats(const kvs_service* service,
                                              kvs_replication_stats* stats);
// Request metrics of a service since it started (monitoring): per operation
// (the wire opcodes, 0 noop .. 5 multi-get) a count per reply status
// (kvs_status), a latency histogram, and the latencies' sum. Latency is
// service time, from the request entering the service to its reply.
// Bucket 0 counts latencies under 1 us, bucket b (1 .. buckets - 2) those
// in [2^(b-1), 2^b) us, the last bucket anything longer.
#define KVS_REQUEST_OPERATIONS 6
#define KVS_REQUEST_STATUSES 14
#define KVS_REQUEST_LATENCY_BUCKETS 28
// Copies the counters into `values`, which must hold
// KVS_REQUEST_OPERATIONS * (KVS_REQUEST_STATUSES +
// KVS_REQUEST_LATENCY_BUCKETS + 1) of them: counts [operation][status], then
// buckets [operation][bucket], then latency sums in nanoseconds
// [operation]. Returns how many it wrote (0 if `capacity` is too small).
KVS_EXPORT size_t kvs_service_request_stats(const kvs_service* service,
                                            uint64_t* values, size_t capacity);
// Turns request metrics on (the default) or off: off, the request path
// reads no clock and counts nothing (to measure what they cost).
KVS_EXPORT void kvs_service_set_request_metrics(kvs_service* service,
                                                int enabled);
KVS_EXPORT void kvs_service_detach(kvs_service* service, uint64_t region_id);
// kvs_service_detach, returning whether a primary's last records reached
// every backup (KVS_OK; otherwise why not, within the replication timeout).
KVS_EXPORT kvs_status kvs_service_detach_flushed(kvs_service* service,
                                                 uint64_t region_id);
// kvs_service_detach_flushed for a split or a merge: client requests that
// reach the region afterwards are held, for at most `hold_ms` (capped at
// 500), until a region that takes it over is attached
// (kvs_service_take_over), it is attached again, or the hold ends; then they
// run again (redirected, or refused KVS_WRONG_REGION). A failed hand-over
// ends the hold at once.
KVS_EXPORT kvs_status kvs_service_detach_sealed(kvs_service* service,
                                                uint64_t region_id,
                                                uint32_t hold_ms);
// Region `region_id`, attached, takes over the client requests addressed to
// the `count` regions `predecessors` (its split parent, the regions merged
// into it): a put, delete, get or multi-get for one of them whose keys lie
// in its range runs in it where it is attached as primary, at its epoch;
// their held requests run again now.
KVS_EXPORT void kvs_service_take_over(kvs_service* service, uint64_t region_id,
                                      const uint64_t* predecessors,
                                      size_t count);
// What region `region_id`, held by `service` as a send-index backup, would
// serve if it were promoted now: its installed levels with the records of
// its log copies (and of what landed in its stream's buffers) past them,
// replayed as recovery would. Changes nothing; safe while the stream runs
// (a digest taken while it changes may differ: take it again).
// KVS_NOT_FOUND for a region not held, KVS_INVALID_ARGUMENT for one held
// otherwise (use kvs_region_contents_digest) or before its stream opened.
KVS_EXPORT kvs_status kvs_service_replica_digest(const kvs_service* service,
                                                 uint64_t region_id,
                                                 kvs_contents_digest* digest);
// Promotes the send-index replica of cluster region `region_id`, held in
// engine region `name`: its copies and installed levels become the region's
// own, the region is reopened (replaying them) and detached from the
// service; every handle on the old region object is invalid from the call
// on. `report` receives what was adopted and how long each step took. Open
// the region again for the new handle.
typedef struct kvs_promotion_report {
  uint64_t segments;  // log segments adopted
  uint64_t drain_us;  // requests in flight on the old region, its stream
  uint64_t close_us;  // the old region closed (logs synced)
  uint64_t adopt_us;  // copies and levels made the region's own
  uint64_t open_us;   // the region reopened, its logs replayed
} kvs_promotion_report;
// The promoted region serves keys in [start, end) (has_end 0: no end), its
// placement's range: a split region's replica holds its sibling's keys too.
KVS_EXPORT kvs_status kvs_service_promote(kvs_service* service,
                                          uint64_t region_id, const char* name,
                                          size_t name_size, const void* start,
                                          size_t start_size, const void* end,
                                          size_t end_size, int has_end,
                                          kvs_promotion_report* report);
// For region `region_id` held as a primary: 1 if its backups all hold every
// write it acknowledged (or it has none), -1 if its replication stream
// failed, 0 while it catches them up (and for a region not held as one).
KVS_EXPORT int kvs_service_backups_caught_up(const kvs_service* service,
                                             uint64_t region_id);
// For region `region_id` held as a primary: each backup's state in the
// order of its placement (1 in sync, 0 being caught up, -1 its stream
// failed) into `states`, up to `capacity`; returns how many backups it has
// (0 for a region not held as a primary).
KVS_EXPORT size_t kvs_service_backup_states(const kvs_service* service,
                                            uint64_t region_id, int8_t* states,
                                            size_t capacity);
// How far each backup of region `region_id` (held as a primary) is behind,
// in placement order: bytes queued for it and not yet sent, writes applied
// that it does not hold yet, and how long the oldest write waiting for it
// has waited (nanoseconds; 0: none waits). Copies up to `capacity`;
// returns how many backups it has (0 for a region not held as a primary).
typedef struct kvs_backup_lag {
  uint64_t queued_bytes;
  uint64_t writes;
  uint64_t oldest_wait_ns;
} kvs_backup_lag;
KVS_EXPORT size_t kvs_service_backup_lags(const kvs_service* service,
                                          uint64_t region_id,
                                          kvs_backup_lag* lags,
                                          size_t capacity);
// Why the stream to backup `index` (placement order) of region `region_id`
// failed: copies up to `capacity` bytes of the text into `message` and
// returns its whole length; 0 if that stream did not fail (or there is no
// such backup).
KVS_EXPORT size_t kvs_service_backup_failure(const kvs_service* service,
                                             uint64_t region_id, size_t index,
                                             char* message, size_t capacity);
// Fencing: from this call on, primaries answer client requests only while a
// lease holds, and none before the first kvs_service_renew_lease (never
// called: no lease enforced, for a service outside a cluster).
KVS_EXPORT void kvs_service_require_lease(kvs_service* service);
// Primaries answer client requests for `valid_for_ns` from now, then
// NOT_PRIMARY until renewed (when a lease is required).
KVS_EXPORT void kvs_service_renew_lease(kvs_service* service,
                                        int64_t valid_for_ns);
// The watchdog's probe of the replication thread (one thread at a time): 1
// if it took a turn since the previous call (the first call, or no
// replication thread: 1), else 0 -- 0 too if its lock is held at that
// instant (the call never blocks); it is asked for another turn.
KVS_EXPORT int kvs_service_probe_replication(kvs_service* service);
// 1 if engine region `name` holds a send-index replica, else 0.
KVS_EXPORT int kvs_service_holds_replica(const kvs_service* service,
                                         const char* name, size_t name_size);
// Answers one encoded request; `sink` receives the encoded reply (always
// one: malformed requests get an INVALID_ARGUMENT reply).
KVS_EXPORT void kvs_service_handle(kvs_service* service, const void* request,
                                   size_t size, kvs_value_sink sink,
                                   void* sink_context);
// Every server using the service must be stopped first.
KVS_EXPORT void kvs_service_destroy(kvs_service* service);

// A fabric server answering requests through `service` (not owned).
typedef struct kvs_fabric_server kvs_fabric_server;
KVS_EXPORT kvs_status kvs_fabric_server_start(const kvs_fabric_options* options,
                                              kvs_service* service,
                                              kvs_fabric_server** server);
KVS_EXPORT uint16_t kvs_fabric_server_port(const kvs_fabric_server* server);
// The watchdog's probe of the thread that reads the server's connections
// (one caller at a time, never blocking): 1 if it came round since the
// previous call (the first call: 1), else 0; it is asked to come round
// again.
KVS_EXPORT int kvs_fabric_server_probe(kvs_fabric_server* server);
// Disconnects every client and stops.
KVS_EXPORT void kvs_fabric_server_stop(kvs_fabric_server* server);

// The client port, served natively (docs/ARCHITECTURE.md "Server
// threads"): `shards` threads, each running its connections' requests to
// completion through `service` (not owned; it must outlive the door).
typedef struct kvs_client_door kvs_client_door;
typedef struct {
  const char* host;          // the address to listen on
  uint16_t port;             // 0: any free port
  uint32_t shards;           // 1..256
  uint32_t max_connections;  // open at once; one more is closed at once
  uint32_t max_in_flight;    // requests per connection not yet answered
  uint32_t max_frame_bytes;  // a larger frame closes its connection
  // The client secret clients must prove (empty: none), 16..1024 bytes.
  const void* client_secret;
  size_t client_secret_size;
  uint32_t handshake_timeout_ms;  // TLS and client handshakes; 0: 10 s
  // TLS (docs/OPERATIONS.md "Security"): PEM files, read at start (an
  // error names a missing or broken one). A null or empty certificate path
  // serves plain TCP; with one, the key and CA paths are needed too.
  const char* tls_certificate_path;  // the certificate chain, leaf first
  const char* tls_private_key_path;  // PKCS#8, unencrypted
  const char* tls_trusted_ca_path;   // the CA client certificates chain to
  // Nonzero: mutual TLS, a client without a certificate from the CA is
  // refused.
  uint8_t tls_require_client_auth;
} kvs_client_door_options;
typedef struct {
  uint64_t requests;             // answered
  uint64_t connections;          // open now
  uint64_t refused_connections;  // closed on arrival: max_connections open
  uint64_t refusals;             // failed the handshake (TLS or client)
  uint64_t output_stalls;        // stopped being read: replies not read
  uint64_t malformed;            // frames above the bound
  uint64_t shard_turns;          // loop turns, summed over the shards
  uint64_t shard_wakeups;        // turns that began by blocking
} kvs_client_door_stats;
KVS_EXPORT kvs_status
kvs_client_door_start(const kvs_client_door_options* options,
                      kvs_service* service, kvs_client_door** door);
KVS_EXPORT uint16_t kvs_client_door_port(const kvs_client_door* door);
KVS_EXPORT void kvs_client_door_stats_get(const kvs_client_door* door,
                                          kvs_client_door_stats* stats);
// The watchdog's probe of the door's shards (one thread at a time): sets
// answered[i] to 1 if shard i ran the probe of the previous call (the first
// call: 1), else 0, for up to `capacity` shards, and posts each shard that
// answered a new one. Returns the number of shards.
KVS_EXPORT size_t kvs_client_door_probe(kvs_client_door* door,
                                        uint8_t* answered, size_t capacity);
// Stops accepting, waits for the replies still to come (bounded by the
// replication timeout), closes every connection.
KVS_EXPORT void kvs_client_door_stop(kvs_client_door* door);

// A client connection. One thread at a time may use a client.
typedef struct kvs_fabric_client kvs_fabric_client;
KVS_EXPORT kvs_status
kvs_fabric_client_connect(const kvs_fabric_options* options, const char* host,
                          uint16_t port, kvs_fabric_client** client);
// Sends one encoded request, tagged for its completion. KVS_BUSY when the
// buffers or the outstanding limit are full now: poll, then retry.
KVS_EXPORT kvs_status kvs_fabric_client_submit(kvs_fabric_client* client,
                                               uint64_t tag,
                                               const void* request,
                                               size_t size);
// Receives one finished request: its reply (status KVS_OK) or the error
// message; the bytes are valid during the call.
typedef void (*kvs_fabric_reply_sink)(void* context, uint64_t tag,
                                      kvs_status status, const void* bytes,
                                      size_t size);
// Drives progress and reports every finished request to `sink`; returns
// how many. After the connection broke, reports every outstanding request
// with the error, then nothing.
KVS_EXPORT size_t kvs_fabric_client_poll(kvs_fabric_client* client,
                                         kvs_fabric_reply_sink sink,
                                         void* context);
KVS_EXPORT size_t
kvs_fabric_client_outstanding(const kvs_fabric_client* client);
KVS_EXPORT void kvs_fabric_client_close(kvs_fabric_client* client);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // KVS_KVS_H_
