// The Replicator's per-region group, per-backup stream and per-backup-server
// connection (replicator.h); private to replication/replicator*.cc.

#ifndef KVS_REPLICATION_REPLICATOR_STREAM_H_
#define KVS_REPLICATION_REPLICATOR_STREAM_H_

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "alloc/volume.h"
#include "channel/client.h"
#include "log/log_format.h"
#include "lsm/level.h"
#include "lsm/region.h"
#include "replication/replicator.h"
#include "replication/send_index_sink.h"

namespace kvs::replication {

// The ticket of the last Send-Index event this thread queued (a write
// waits for its own log bytes).
extern thread_local uint64_t last_queued_ticket;

// Send-Index: what a region reported (lsm::ReplicationTap), in order.
struct StreamEvent {
  enum class Type { kLogBytes, kIndexSegment, kInstallLevel, kTrim };
  Type type = Type::kLogBytes;
  uint64_t ticket = 0;
  log::LogKind kind = log::LogKind::kSmall;  // kLogBytes
  uint64_t chain_index = 0;                  // kLogBytes
  uint64_t segment = 0;                      // kLogBytes, kIndexSegment
  uint64_t offset = 0;                       // kLogBytes
  std::string bytes;                         // kLogBytes, kIndexSegment
  size_t level = 0;                          // kInstallLevel, kIndexSegment
  lsm::LevelDescriptor descriptor;           // kInstallLevel
  std::optional<size_t> emptied;             // kInstallLevel
  uint64_t compacted_lsn = 0;                // kInstallLevel
  std::vector<TrimmedCopy> trimmed;          // kTrim
  // A catch-up's event whose bytes are still on the device (the region's
  // segment `segment` of the group's volume, pinned): the catch-up reader
  // fills `bytes` (its first `load_bytes`; an index segment whole, trailing
  // zeros left off) before the stream may send it.
  bool unloaded = false;
  bool from_device = false;  // a catch-up's: counted in loaded_bytes once read
  uint64_t load_bytes = 0;
  // Log bytes of a segment the backup holds a shorter copy of (same chain
  // index): its FLUSH-TAIL extends that copy in place (no `starts`), so the
  // backup's installed levels that point into it stay valid.
  bool resumes = false;

  static StreamEvent LogBytes(log::LogKind kind,
                              const log::AppendedBytes& appended) {
    StreamEvent event;
    event.type = Type::kLogBytes;
    event.kind = kind;
    event.chain_index = appended.chain_index;
    event.segment = appended.segment;
    event.offset = appended.offset;
    event.bytes = appended.bytes;
    return event;
  }
  static StreamEvent Unloaded(Type type, log::LogKind kind,
                              uint64_t chain_index, uint64_t segment,
                              uint64_t bytes, bool resumes = false) {
    StreamEvent event;
    event.type = type;
    event.kind = kind;
    event.chain_index = chain_index;
    event.segment = segment;
    event.unloaded = true;
    event.from_device = true;
    event.load_bytes = bytes;
    event.resumes = resumes;
    return event;
  }
  static StreamEvent IndexSegment(size_t level, uint64_t segment,
                                  std::string_view bytes) {
    StreamEvent event;
    event.type = Type::kIndexSegment;
    event.level = level;
    event.segment = segment;
    event.bytes = bytes;
    return event;
  }
  static StreamEvent Trim(log::LogKind kind,
                          const std::vector<log::ReleasedSegment>& released) {
    StreamEvent event;
    event.type = Type::kTrim;
    for (const log::ReleasedSegment& segment : released) {
      event.trimmed.push_back({kind, segment.segment, segment.chain_index});
    }
    return event;
  }
  static StreamEvent InstallLevel(size_t level,
                                  const lsm::LevelDescriptor& descriptor,
                                  std::optional<size_t> emptied,
                                  uint64_t compacted_lsn) {
    StreamEvent event;
    event.type = Type::kInstallLevel;
    event.level = level;
    event.descriptor = descriptor;
    event.emptied = emptied;
    event.compacted_lsn = compacted_lsn;
    return event;
  }
};

struct Replicator::Peer {
  std::string name;  // host:port
  std::unique_ptr<channel::Client> client;
  // Replication thread only: one-sided writes posted and not completed, by
  // region. A new stream of a region OPENs on this connection only once its
  // earlier streams' writes completed: the backup then reuses their buffers
  // (channel::ReplicaBuffer, "Lifetime").
  std::map<uint64_t, size_t> writes_in_flight;
  size_t posts_in_flight = 0;  // one-sided writes (each of some batches)
  // Its connection is in the Replicator's answer set (under its mutex_).
  bool in_answer_set = false;
};

// A region's replication: its streams, one per backup, and what they share.
struct Replicator::Group {
  // Writes are tracked per key stripe for reads (AwaitReadAsync).
  static constexpr size_t kStripes = 1024;
  // A stripe's ticket while a write to it is being applied.
  static constexpr uint64_t kApplying = std::numeric_limits<uint64_t>::max();

  uint64_t region_id = 0;
  ReplicationMode mode = ReplicationMode::kBuildIndex;
  lsm::Region* region = nullptr;  // Send-Index
  // The region object the last write applied to (under `order`): what a
  // reopen that leaves no backup holding the waiting writes syncs (Open).
  lsm::Region* applied_to = nullptr;
  uint64_t engine_region_id = 0;    // Send-Index
  alloc::Volume* volume = nullptr;  // Send-Index: the region's

  // Held across a write's local apply and its queueing, so every stream
  // sees writes in the order they applied.
  std::mutex order;

  std::mutex mutex;  // everything below, and every stream's shared state
  std::condition_variable changed;
  uint64_t epoch = 0;
  // The region's stream key at `epoch`: what a new stream's OPEN proves
  // (replication_format.h).
  std::string stream_key;
  size_t min_replicas = 1;
  uint64_t next_ticket = 1;
  bool closing = false;
  // Set once the group is abandoned or replaced: writes fail with it.
  Status ended;
  // The streams of the current backups, in the order Open named them.
  std::vector<std::shared_ptr<Stream>> streams;
  // Writes waiting for their backups, in ticket order (registered under
  // `order`); the replication thread completes them (Settle).
  struct Waiter {
    uint64_t ticket;
    std::chrono::steady_clock::time_point deadline;
    Replicator::WriteDone done;
    // On this primary's disk (a reopen that left no required backup
    // synced the region): it may be acknowledged with no backup holding it.
    bool on_disk = false;
  };
  std::deque<Waiter> waiters;
  // Reads waiting for the writes they may have seen (AwaitReadAsync), in
  // arrival order (their tickets need not rise); completed by Settle.
  struct ReadWaiter {
    uint64_t ticket;
    std::chrono::steady_clock::time_point deadline;
    std::function<void(Status)> done;
  };
  std::vector<ReadWaiter> read_waiters;

  // The ticket of the last write to each key stripe (0: none yet;
  // kApplying while one applies). Written under `order`.
  std::array<std::atomic<uint64_t>, kStripes> stripes{};

  static size_t Stripe(std::string_view key);
};

// The segments one catch-up pinned (lsm::Region::ReportState), unpinned
// when the last stream reading them lets go.
struct CatchUpPins {
  alloc::Volume* volume = nullptr;
  std::vector<uint64_t> segments;
  ~CatchUpPins() {
    if (volume != nullptr) volume->Unpin(segments);
  }
};

struct Replicator::Stream : std::enable_shared_from_this<Replicator::Stream> {
  enum class State { kConnecting, kOpening, kReady, kClosed, kFailed };
  // Build-index: a record to replicate.
  struct Queued {
    uint64_t ticket;
    std::string bytes;
  };
  using Event = StreamEvent;
  // Send-Index: the lane of the index events (the logs' lanes are their
  // LogIndex).
  static constexpr size_t kIndexLane = kSendIndexLogs;
  // Bytes written with one one-sided write.
  struct Batch {
    std::string bytes;
    size_t buffer = 0;
    uint64_t offset = 0;
    uint64_t first_ticket = 0;
    uint64_t last_ticket = 0;
    size_t lane = kIndexLane;  // Send-Index
    bool posted = false;
    bool landed = false;
  };
  // Send-Index: the log segment a log's buffer is being filled with.
  struct LogState {
    bool active = false;
    uint64_t segment = 0;
    uint64_t chain_index = 0;
    size_t parity = 0;     // its buffer: chain index % 2
    uint64_t landed = 0;   // the backup holds a prefix this long
    uint64_t flushed = 0;  // bytes a FLUSH-TAIL named
    size_t batches = 0;    // batches of this log not yet landed
    bool started = false;  // no FLUSH-TAIL since the segment started
    size_t flushes_pending[2] = {0, 0};  // replies, per buffer
    // A catch-up resumed the backup's copy of this segment, sending only
    // the bytes from `fill_at` (the block its copy ends in) on: once they
    // landed, a FLUSH-TAIL has the backup fill its buffer with the copy's
    // bytes before them, so that the buffer holds the segment from its
    // header, as a promotion reads it (0: none due).
    uint64_t fill_at = 0;
  };

  explicit Stream(std::shared_ptr<Group> owner, BackupTarget backup)
      : group(std::move(owner)), target(std::move(backup)) {}

  const std::shared_ptr<Group> group;
  const BackupTarget target;
  // When the primary made it: a stream is blamed for a stall only since
  // (Replicator::FailStalledLocked), not for writes older than itself.
  const std::chrono::steady_clock::time_point created =
      std::chrono::steady_clock::now();
  // Build-Index (no catch-up): the first ticket queued to it. It never holds
  // a write before -- made when the master reopened the region after the
  // backup's last stream failed, it did not get the writes that stream had
  // not landed -- so such a write waiting for it fails (its outcome
  // unknown) rather than counting as held once later tickets land
  // (Replicator::Held). 0: the stream has its catch-up (Send-Index).
  uint64_t first_ticket = 0;

  // The connection attempt PeerFor waits for (0: none; replication thread).
  uint64_t dial_awaited = 0;

  // Under group->mutex.
  State state = State::kConnecting;
  Status failure;
  // Writes wait for this backup (replicator.h, "Membership").
  bool required = false;
  // The master counts this backup in sync (opened not joining, or opened
  // again so): only such a backup makes a write durable without this
  // primary's disk (replicator.h, "alone").
  bool counted_in_sync = false;
  // When the oldest work its backup's connection was given and has not
  // answered was posted (none: nullopt), as the replication thread saw it at
  // the start of its turn (Replicator::BackupStalled).
  std::optional<std::chrono::steady_clock::time_point> unanswered_since;
  // The catch-up landed: the backup holds the region's state as of
  // catch_up_ticket (Build-Index: none, so from the start).
  bool caught_up = false;
  // A stream made required by its catch-up counts as in sync only once it
  // holds every write acknowledged before (0: at once).
  uint64_t in_sync_ticket = 0;
  // Send-Index: whether the region's events are queued (from the end of
  // its catch-up report on), and the queues: one lane per log and one for
  // index events (replicator_send_index.cc orders the lanes).
  bool live = false;
  // The ticket of the catch-up's last event (0: none).
  uint64_t catch_up_ticket = 0;
  std::deque<Queued> queue;  // Build-Index
  std::deque<Event> lanes[kSendIndexLogs + 1];
  uint64_t done_ticket = 0;  // the backup holds the bytes through this
  // Replies outstanding for SHIP-SEGMENT, INSTALL-LEVEL and TRIM, and the
  // ticket of the last of these sent if it frees segments on the backup.
  size_t index_replies_pending = 0;
  uint64_t freeing_ticket = 0;
  LogState logs[kSendIndexLogs];
  size_t flush_pending = 0;  // Build-Index: replies for the last FLUSH
  // Send-Index: the catch-up still to report (after the OPEN reply, which
  // says what the backup holds of the region's lineage: `held`).
  bool needs_catch_up = false;
  bool opened = false;
  ControlReply held;
  // Catch-up events still to read from the device, in ticket order
  // (pointers into the lanes: a deque keeps its elements in place, and an
  // unloaded event is never sent), the bytes read and not yet sent, and the
  // catch-up's pins, let go once all are read.
  std::deque<Event*> to_load;
  uint64_t loaded_bytes = 0;
  std::shared_ptr<CatchUpPins> pins;
  // Bytes of every record (Build-Index) or event (Send-Index) queued and
  // not yet sent (bounded: ReplicatorOptions::stream_queued_bytes_max).
  uint64_t queued_bytes = 0;

  // Whether the stream is up and holds every write acknowledged (caller
  // holds group->mutex).
  bool InSync() const {
    return state == State::kReady && failure.ok() && required && caught_up &&
           done_ticket >= in_sync_ticket;
  }
  bool Healthy() const {
    return failure.ok() && state != State::kFailed && state != State::kClosed;
  }
  // Send-Index: queues `event` on its lane with `ticket` (caller holds
  // group->mutex); an unloaded one is also queued for the catch-up reader.
  void Push(Event event, uint64_t ticket);
  // Takes a sent event's bytes off the stream's accounting.
  void Sent(const Event& event);
  // The lowest ticket of bytes the backup may not hold yet, or the group's
  // next ticket if none (caller holds group->mutex).
  uint64_t FirstTicketPending() const;

  // Replication thread only.
  std::shared_ptr<Peer> peer;
  std::vector<fabric::RemoteBuffer> buffers;
  bool open_pending = false;
  // When to send an OPEN refused for now again (Replicator::Connect).
  std::optional<std::chrono::steady_clock::time_point> open_retry_at;
  size_t filling = 0;
  uint64_t offset = 0;
  uint64_t sequence = 0;
  bool index_posted = false;  // the front index segment's bytes are posted
  // Under group->mutex (completions change them).
  std::deque<std::shared_ptr<Batch>> batches;
};

// One batch of a posted write (Replicator::PostBatches).
struct Replicator::PostedBatch {
  // A stream gone meanwhile (closed, replaced) cares no more; a strong
  // reference would keep it, and through its peer the write's callback,
  // alive for ever.
  std::weak_ptr<Stream> stream;
  std::shared_ptr<Stream::Batch> batch;
  uint64_t region_id = 0;
};

}  // namespace kvs::replication

#endif  // KVS_REPLICATION_REPLICATOR_STREAM_H_
