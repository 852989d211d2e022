// Replicator: a primary's end of value-log replication, for every region
// this server is primary of.
//
// Per region a group of streams, one per backup. A stream sends OPEN to its
// backup's server (over one fabric connection per backup server, shared by
// the streams) and gets replica buffers. A write is applied locally and what
// it appended queued on every stream under the group's order lock (so
// backups see writes in the order the primary applied them); the
// replication thread writes queued bytes, batched, one-sidedly into the
// backup's buffers, and completes the write (its callback, from that
// thread) once every backup the write must wait for holds them: no thread
// waits for a replicated write. Writes to one backup server are group
// commits across regions: at most ReplicatorOptions::posts_in_flight_max
// are in flight to it, and the batches made meanwhile, of any regions, go
// together, one post scattering up to four of them to their buffers.
//
// Build-Index (ReplicationMode::kBuildIndex): a stream carries records into
// two alternating buffers, each handed over with FLUSH (the backup applies
// it) while the other one fills.
//
// Send-Index (ReplicationMode::kSendIndex): a stream carries what the region
// reports through lsm::ReplicationTap (the Replicator is the engine's tap):
// log bytes written one-sidedly at their own offsets into per-(log, chain
// parity) buffers, FLUSH-TAIL when a segment is done or before an index
// segment that may point into a tail, each finished index segment through
// the index buffer with SHIP-SEGMENT, INSTALL-LEVEL (send_index_format.h,
// send_index_sink.h). A new stream first carries the region's whole state
// (Region::ReportState: the catch-up, its segments read from the device as
// they are sent, at most limits::catch_up_read_ahead_bytes ahead, so memory
// stays bounded whatever the region's size), then its events in order.
//
// Membership (failure recovery, docs/ARCHITECTURE.md): Open at a new epoch
// keeps the stream of every backup still in the group that is in sync and
// healthy (it carries on at the new epoch; its backup keeps what it holds),
// starts a stream with a catch-up for every other, and ends the streams of
// backups no longer in the group. A write waits for the backups that are
// *required*: those the master counts as in sync (not joining) and those
// whose catch-up finished (from then on the primary reports them in sync,
// so the master may promote them: they must hold every write acknowledged
// after). A required backup whose stream failed holds writes up (they wait,
// within the timeout) until the group changes: the primary reports the
// failure (BackupStates) and the master reopens the region with that
// backup joining or gone. Fewer in-sync replicas than the group's minimum
// refuse writes before they apply (NOT_ENOUGH_REPLICAS).
//
// A group left with no required backup the master counts in sync (every
// one failed and joining again, none listed, or only joining ones whose
// catch-up ended, which writes wait for but the master would not promote
// yet) is *alone*: a write is acknowledged once it is on the primary's disk
// too (the caller's `sync`), whatever the engine's durability, so that no
// single crash loses an acknowledged write. The master opens the region
// here again once it records a joining backup in sync, which ends that. A
// reopen that leaves writes waiting with no required backup syncs the region
// before they are acknowledged; a read of an alone group is answered once what
// it may have seen is on disk (the caller syncs, Alone()).
//
// Reads (AwaitReadAsync): a read that returned a key some write changed may
// not answer before every required backup holds that write, so no client
// sees a value a failover could take back. Writes are tracked per key
// stripe; a waiting read is settled with the writes (Settle), and no thread
// blocks for it.
//
// Turns (Drive): a shard that ran writes takes the replication thread's turn
// at the end of its own, so its writes leave without waking that thread.
//
// Thread safety: all methods may be called concurrently.

#ifndef KVS_REPLICATION_REPLICATOR_H_
#define KVS_REPLICATION_REPLICATOR_H_

#include <sys/eventfd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "channel/client.h"
#include "lsm/region.h"
#include "lsm/replication_tap.h"
#include "replication/replication_format.h"
#include "replication/send_index_format.h"
#include "util/limits.h"
#include "util/status.h"

namespace kvs::replication {

struct BackupTarget {
  std::string host;  // the backup server's fabric bootstrap
  uint16_t port = 0;
  // The master does not count it in sync yet (it is being caught up):
  // writes do not wait for it until its catch-up is done, and its stream
  // is always started afresh.
  bool joining = false;

  std::string Name() const { return host + ":" + std::to_string(port); }
};

struct StreamEvent;  // replicator_stream.h

enum class ReplicationMode : uint8_t {
  kBuildIndex = 0,  // records; every backup applies them to its own region
  kSendIndex = 1,   // log segments and compacted index segments
};

// How one backup of a region stands, as its primary sees it.
enum class BackupState : int8_t {
  kFailed = -1,     // its stream failed: the region must be reopened
  kCatchingUp = 0,  // its stream is starting or catching up
  kInSync = 1,      // it holds every write the region acknowledged
};

// How far one backup's stream is behind its primary (monitoring): what the
// primary applied that the backup does not hold yet.
struct BackupLag {
  uint64_t queued_bytes = 0;  // queued for it and not yet sent
  uint64_t writes = 0;        // writes applied here it does not hold yet
  // How long the oldest write waiting for it has waited (0: none waits).
  std::chrono::nanoseconds oldest_wait{0};
};

struct ReplicatorOptions {
  fabric::EndpointOptions endpoint;  // this server's provider and node
  // Bounds a write's wait for its backups, a stream's messages, and a
  // graceful close.
  std::chrono::milliseconds timeout{10'000};
  // A required backup that takes none of the writes waiting for it within
  // this long fails its stream (a cut or stalled backup): the master, told
  // at once (stream_failures; the server's FailureAnnouncer), reopens the
  // region with that backup joining, and
  // the writes stop waiting for it. Shorter than `timeout`, so that a region
  // with a stuck backup is unavailable for about this plus a pass, not for
  // the whole timeout; long enough for a loaded backup's fsync or compaction
  // pause (a failed stream costs a catch-up, not data).
  std::chrono::milliseconds stall_timeout{2'000};
  // Bytes of queued records written with one one-sided write at most.
  size_t batch_bytes_max = 256u << 10;
  // One-sided writes in flight to one backup server at most, whatever
  // regions they carry. Batches made meanwhile wait and go together: one
  // post scatters up to the provider's limit of them (4 on tcp and shm),
  // of any regions (group commit across regions). Bounds the thread's
  // posts, not the bytes: batches are bounded per stream
  // (stream_queued_bytes_max).
  size_t posts_in_flight_max = 2;
  // Bytes one stream may hold queued for its backup and not yet sent, in
  // both modes (Build-Index records, Send-Index events): a stream found
  // with more when a write comes fails (its backup joins again later, and
  // writes stop waiting for it once the master marks it joining) rather
  // than queue without bound. Tests lower it.
  uint64_t stream_queued_bytes_max = limits::stream_queued_bytes_max;
  // The cluster secret its connections to backups prove as peers' (channel/
  // bootstrap_auth.h); empty: none.
  std::string secret;
};

struct ReplicatorStats {
  uint64_t records = 0;
  uint64_t bytes = 0;           // record bytes replicated (to each backup)
  uint64_t writes = 0;          // one-sided writes posted (all backups)
  uint64_t batches = 0;         // batches they carried (one or more per write)
  uint64_t flushes = 0;         // FLUSH and FLUSH-TAIL messages (all backups)
  uint64_t index_bytes = 0;     // index segment bytes (to each backup)
  uint64_t index_messages = 0;  // SHIP-SEGMENT and INSTALL-LEVEL (all)
  // CPU of the replication thread spent on index segments and levels
  // (the rest of its CPU carries log bytes), and of the engine's threads
  // copying them into the stream.
  uint64_t index_cpu_ns = 0;
  // Catch-ups: bytes read from the device, and the most any stream held
  // read and not yet sent (bounded by limits::catch_up_read_ahead_bytes
  // plus one segment).
  uint64_t catch_up_bytes = 0;
  // Of them, the small and large logs' (medium segments go with the
  // levels that name them).
  uint64_t catch_up_log_bytes = 0;
  uint64_t catch_up_ahead_peak_bytes = 0;
  // Streams that failed (a broken connection, a refusal, the stall
  // timeout): a server watches it to tell the master at once.
  uint64_t stream_failures = 0;
  // OPENs sent again because a joining backup had not opened the region
  // yet (a split's daughters open on every member at once).
  uint64_t open_retries = 0;
};

class Replicator final : public lsm::ReplicationTap {
 public:
  explicit Replicator(ReplicatorOptions options);
  // Closes every group (flushing it) and every connection.
  ~Replicator() override;
  Replicator(const Replicator&) = delete;
  Replicator& operator=(const Replicator&) = delete;

  // Replicates `region_id` at `epoch` to `backups` (see "Membership"
  // above), `min_replicas` replicas (the primary counted) being the fewest
  // in sync that may acknowledge a write. Send-Index needs `region` (whose
  // state new streams start with; its events must reach this Replicator as
  // the engine's tap). A different region object or mode replaces the
  // group: its streams end and every one starts afresh. `stream_key`: the
  // region's key at `epoch`, which new streams' OPENs prove to their
  // backups (replication_format.h); streams kept from an earlier epoch
  // carry on without a new OPEN. A group with no backups is kept too: its
  // writes still count `min_replicas`.
  void Open(uint64_t region_id, uint64_t epoch,
            std::vector<BackupTarget> backups,
            ReplicationMode mode = ReplicationMode::kBuildIndex,
            lsm::Region* region = nullptr, size_t min_replicas = 1,
            std::string stream_key = std::string());
  // Flushes what the region's streams hold to its backups and forgets the
  // group; bounded by the timeout. OK if the region has no group.
  Status Close(uint64_t region_id);
  // Closes every group (Close each).
  void CloseAll();
  // Ends `region_id`'s group at once, without handing anything over: its
  // waiting and later writes fail with `why`.
  void Abandon(uint64_t region_id, const std::string& why);
  bool Replicates(uint64_t region_id) const;
  // Each backup's state, in the order of the last Open's `backups`; empty
  // without a group.
  std::vector<BackupState> BackupStates(uint64_t region_id) const;
  // Why each backup's stream failed, in the same order (empty for a backup
  // whose stream did not fail); empty without a group.
  std::vector<std::string> BackupFailures(uint64_t region_id) const;
  // How far each backup is behind, in the same order; empty without a
  // group. Walks the streams' queues under the group's lock: for a scrape
  // now and then, not a hot path.
  std::vector<BackupLag> BackupLags(uint64_t region_id) const;

  // Runs `apply` (the local write) and, if it succeeds, replicates
  // `record` (Send-Index: what `apply` appended), then returns: no thread
  // waits for the backups. `done` gets the outcome exactly once: OK once
  // every required backup holds the write, or why not: NOT_ENOUGH_REPLICAS
  // before it applied (also when the region has no group: Open first);
  // after, IO_ERROR (its outcome unknown). It runs on
  // this thread when the outcome is known at once (no group, a refusal,
  // apply failed), else on the replication thread when the backups'
  // completions arrive (or the timeout runs out, or the group ends): it
  // must not block. Writes waiting are bounded by the callers' requests
  // in flight (clients' reply slots, the client door's per-connection
  // limit).
  // `region` is the region object `apply` writes to (the caller keeps it
  // alive until this returns): a write of an alone group is acknowledged
  // once region->Sync() made it durable, on this thread, outside the
  // group's locks (see "alone" above); with no region, such a write ends
  // IO_ERROR.
  using WriteDone = std::function<void(Status)>;
  void Write(uint64_t region_id, const Record& record, lsm::Region* region,
             const std::function<Status()>& apply, WriteDone done);
  // A write decided by what the region holds (a compare-and-set, an
  // increment): `decide` runs where `apply` would -- in the group's write
  // order, so no other write of the region comes between what it reads and
  // what it writes -- and either writes (to the region, as `apply` does)
  // and fills `record` with what it wrote (its views valid until this
  // returns), or sets `*wrote` false and writes nothing. Then `done` gets
  // the outcome as Write's does; when nothing was written, once every
  // required backup holds the last write of `key`, as a read's (what
  // `decide` read may be shown).
  using Decide = std::function<Status(Record* record, bool* wrote)>;
  void WriteDecided(uint64_t region_id, std::string_view key,
                    lsm::Region* region, const Decide& decide, WriteDone done);
  // An atomic batch: as Write, for `records` (at least one) that `apply`
  // writes as one lsm::Region::WriteBatch. They travel as one unit on every
  // stream (build-index: consecutive records, each but the last flagged to
  // go on, in one replica buffer; send-index: the batch's log records, which
  // carry the same flag), and `done` gets one outcome for all of them.
  void WriteBatch(uint64_t region_id, const std::vector<Record>& records,
                  lsm::Region* region, const std::function<Status()>& apply,
                  WriteDone done);
  // Whether `region_id`'s group has no required backup (see above): reads
  // then sync the region before they answer. False without a group.
  bool Alone(uint64_t region_id) const;
  // For a read that looked `keys` up (a get's or a multi-get's; none: a
  // scan, every write): `done` gets OK once every required backup holds the
  // writes the read may have seen -- at once if they do, else from whichever
  // thread settles the group (a shard's Drive, the replication thread) -- or
  // BUSY when they do not within the timeout. A shard's read thus never blocks
  // its shard.
  void AwaitReadAsync(uint64_t region_id,
                      std::optional<std::vector<std::string_view>> keys,
                      std::function<void(Status)> done);

  ReplicatorStats stats() const;

  // Takes the replication thread's turn on the calling thread, unless that
  // thread is in one (then it takes another): posts what writes queued,
  // polls the backups' answers and completes the writes they hold. A shard
  // calls it at the end of its turn, so that the writes it ran leave
  // without waking the replication thread.
  // A write from a thread that ends its turns (util/turns.h) notifies
  // nobody: that thread's Drive posts it.
  // With `may_watch` (a shard with an event loop), when writes are still in
  // flight and no other caller watches for their answers, it returns true:
  // the caller then watches AnswerFd() (readable once a backup answered),
  // calls AnswersArrived when it fires, and Drive again -- and the
  // replication thread is not woken for those writes (it still looks for
  // the timeouts, every 10 ms while it waits in its loop and every
  // kIdleWait, 100 ms, while idle: an answer a watcher missed waits that
  // long at most). Work a Drive leaves (streams to connect or open, turns
  // still making progress when it stops) wakes the thread.
  // Over the stream transport only.
  bool Drive(bool may_watch = false);
  // The descriptor a watching caller waits on (an epoll set of the
  // backups' connections), or -1 on a transport without one.
  int AnswerFd() const { return answer_set_; }
  // A number no other Replicator of this process has: a watcher's key for
  // AnswerFd (a descriptor number may be reused).
  uint64_t id() const { return id_; }
  // The watcher's descriptor fired (or it stopped watching).
  void AnswersArrived() {
    answer_watched_.store(false, std::memory_order_release);
  }
  // The server's watchdog (one thread at a time, never blocking): whether
  // the replication thread came round its loop since the previous call
  // (true on the first); if it did, asks it to come round again. False too
  // when the replicator's lock is held at that instant: the watchdog acts
  // only on a run of answers missed for many seconds.
  bool Probe();

  // Drives that took the turn (monitoring).
  uint64_t drives() const { return drives_.load(std::memory_order_relaxed); }

  // lsm::ReplicationTap: events of regions with a Send-Index group.
  void OnLogAppend(uint64_t engine_region_id, log::LogKind kind,
                   const log::AppendedBytes& appended) override;
  void OnIndexSegment(uint64_t engine_region_id, size_t level, uint64_t segment,
                      std::string_view bytes) override;
  void OnLevelInstalled(uint64_t engine_region_id, size_t level,
                        const lsm::LevelDescriptor& descriptor,
                        std::optional<size_t> emptied,
                        uint64_t compacted_lsn) override;
  void OnLogReleased(
      uint64_t engine_region_id, log::LogKind kind,
      const std::vector<log::ReleasedSegment>& released) override;

 private:
  struct Group;
  struct Stream;
  struct Peer;
  void Run();
  // One turn (caller holds turn_mutex_): pumps every stream, posts their
  // batches, polls every backup and settles the writes held; true if it
  // made progress. `waiting`: something is in flight to a backup; `peers`
  // and `seen` what it looked at (for WaitForArrivals).
  // `driven`: a Drive's (a shard's) turn, which leaves the streams still
  // connecting to the replication thread.
  bool Turn(bool driven, bool* waiting,
            std::vector<std::shared_ptr<Peer>>* peers, uint64_t* seen);
  // Whether `stream` is past connecting and opening.
  static bool Connected(const Stream& stream);
  // The catch-up reader's thread: reads catch-up events' segments from the
  // device, a bounded amount ahead of what each stream sent.
  void ReadCatchUps();
  bool Pump(Stream* stream);
  // The opening states, common to both modes; true if it moved on.
  bool Connect(Stream* stream);
  // Posts the batches of `streams` not posted yet, those to one backup
  // server together (ReplicatorOptions::posts_in_flight_max); true if any
  // was.
  bool PostBatches(const std::vector<std::shared_ptr<Stream>>& streams);
  // A write of batches to `peer` completed with `status`.
  struct PostedBatch;
  void Landed(Peer* peer, const std::vector<PostedBatch>& posted,
              const Status& status);
  // Build-Index's ready state.
  bool PumpBuildIndex(Stream* stream);
  // Send-Index's ready state (replicator_send_index.cc).
  bool PumpSendIndex(Stream* stream);
  // Marks a Send-Index stream caught up once its catch-up landed, and
  // required and in sync as the rules above say (caller holds the group's
  // mutex).
  static void UpdateSync(Stream* stream);
  // Starts the catch-up of `stream` (a Send-Index stream of `group` whose
  // OPEN was answered, not live yet): the region's state less what the
  // backup holds, then its events.
  void CatchUp(const std::shared_ptr<Group>& group,
               const std::shared_ptr<Stream>& stream);
  // Queues a Send-Index event on every live stream of `engine_region_id`.
  void Queue(uint64_t engine_region_id, StreamEvent&& event);
  // Whether `stream` may take more: false, failing it, once it holds more
  // than options_.stream_queued_bytes_max queued (caller holds the group's
  // mutex).
  bool HasRoom(Stream* stream) const;
  // Whether every required stream of `group` holds `ticket` (caller holds
  // the group's mutex): nullopt if not yet, else the outcome (OK, IO_ERROR
  // below the minimum of replicas with `count_replicas`, or the group's
  // end).
  static std::optional<Status> Held(const Group& group, uint64_t ticket,
                                    bool count_replicas, const char* what);
  // Whether no stream of `group` is required (caller holds its mutex).
  static bool AloneLocked(const Group& group);
  // Open's part for a group whose new membership requires no backup:
  // syncs `region` if writes wait that no backup may hold, and marks them
  // on disk (caller holds the group's `order`, not its mutex).
  static void SyncWaitersLeftAlone(Group* group, lsm::Region* region);
  // Why `ticket` is not held within the timeout (caller holds the mutex).
  Status TimedOut(const Group& group, uint64_t ticket, const char* what) const;
  // Completes the writes of `group` whose outcome is known (held, ended,
  // timed out); every one still waiting if `ending`. Takes the group's
  // mutex; runs their callbacks after releasing it.
  void Settle(Group* group, bool ending);
  // What Write, WriteBatch and WriteDecided share: a unit of writes to
  // `keys` that `decide` applies (or decides not to) and describes in
  // `records`, in the group's write order, replicated and completed as one.
  using DecideUnit =
      std::function<Status(std::vector<Record>* records, bool* wrote)>;
  void WriteUnit(uint64_t region_id, std::span<const std::string_view> keys,
                 lsm::Region* region, const DecideUnit& decide, WriteDone done);
  // Fails the stream of every required backup that holds none of the
  // writes waiting for it (or that reads wait for) within the stall timeout
  // (group->mutex held).
  void FailStalledLocked(Group* group,
                         std::chrono::steady_clock::time_point now);
  // Whether `stream`'s backup is to blame for a wait past the stall timeout
  // (group->mutex held): it left work it was given undone that long, or it
  // was given nothing while the replication thread ran freely. A backup is
  // never blamed for a replication thread that was held up (by a post to
  // another backup, a starved core): what it was given is then not known.
  bool BackupStalled(const Stream& stream,
                     std::chrono::steady_clock::time_point now) const;
  // Fails `stream`, whose backup took no write for `waited` (the group's
  // mutex held).
  void FailStalled(Stream* stream, std::chrono::steady_clock::duration waited);
  // Sends a Send-Index control message to the stream's backup; `pending`
  // (under the group's mutex) counts the replies outstanding.
  bool SendIndexControl(Stream* stream, const IndexControl& control,
                        size_t* pending, std::unique_lock<std::mutex>* lock);
  // Sends FLUSH-TAIL of log `log`'s buffer.
  bool SendFlushTail(Stream* stream, size_t log, bool sealed,
                     std::unique_lock<std::mutex>* lock);
  // Sends FLUSH of the buffer being filled (caller holds the group's
  // mutex); false if the stream failed.
  bool SendFlush(Stream* stream, std::unique_lock<std::mutex>* lock);
  // Sends `message` (a control message named `what`) to the stream's
  // backup; `pending` (under the group's mutex) counts the replies
  // outstanding. False if the stream failed (the lock is then released).
  bool SendToBackup(Stream* stream, const std::string& message,
                    const std::string& what, size_t* pending,
                    std::unique_lock<std::mutex>* lock);
  // The healthy connection to `stream`'s backup, or null: then `status` is
  // the failure of the attempt the stream waited for, or OK while one is
  // under way (asked for here if none is). Never blocks: connections are
  // made on the connector thread (ConnectPeers), not in a turn, where a
  // backup slow to answer its bootstrap (cut off, paused) held every
  // region's replication for the bootstrap timeout, once per region (the
  // 10-minute chaos seed 1313: three waves of 2 s, and a region 8 s
  // unavailable). Replication thread (a turn) only.
  std::shared_ptr<Peer> PeerFor(Stream* stream, Status* status);
  // Connects to `target` (blocking: bounded by the bootstrap timeouts).
  std::shared_ptr<Peer> Dial(const BackupTarget& target, Status* status);
  // The connector thread: makes the connections PeerFor asked for, one at
  // a time, and tells the replication thread when each is done.
  void ConnectPeers();
  void Fail(Stream* stream, const Status& status);
  // Takes `group` out of the maps (caller holds mutex_).
  void ForgetLocked(const std::shared_ptr<Group>& group);
  std::shared_ptr<Group> Find(uint64_t region_id) const;

  const ReplicatorOptions options_;
  mutable std::mutex mutex_;  // groups_, peers_, running_, stats_
  std::condition_variable work_;
  // Raised (under mutex_) with every notify of work_: the replication
  // thread's idle wait ends on a change after it last looked, never misses
  // one that came before it waits.
  uint64_t work_generation_ = 0;
  // Tells the replication thread of new work (caller holds mutex_): raises
  // work_generation_, notifies work_ and, while the thread blocks on its
  // connections' arrivals (WaitForArrivals), `work_fd_`.
  void NotifyWorkLocked();
  // Blocks the replication thread until a backup's bytes arrive on one of
  // `peers`' connections (their wait fds: tcp), new work comes, or a bound
  // passes; false, not waiting, if some connection has no wait fd.
  bool WaitForArrivals(const std::vector<std::shared_ptr<Peer>>& peers,
                       uint64_t seen);
  int work_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  bool polling_ = false;  // under mutex_: blocked in WaitForArrivals
  // Drive's watchers (the stream transport): every live peer's connection
  // is in `answer_set_` (Peer::in_answer_set, under mutex_); one caller at
  // a time watches it (answer_watched_), and while one does the
  // replication thread leaves the connections to it.
  int answer_set_ = -1;
  std::atomic<bool> answer_watched_{false};
  const uint64_t id_;
  // Puts `peer`'s connection in the answer set, or takes it out (caller
  // holds mutex_).
  void AnswerSetAddLocked(Peer* peer);
  void AnswerSetRemoveLocked(Peer* peer);
  // The catch-up reader's own wake-up (under mutex_): new streams to catch
  // up and the end. Writes do not wake it (they notify work_ only), so a
  // busy primary's reader stays asleep.
  std::condition_variable catch_up_work_;
  uint64_t catch_up_generation_ = 0;
  std::map<uint64_t, std::shared_ptr<Group>> groups_;
  // Send-Index groups by the engine's id of their region; its size, read
  // without the lock so events of other regions cost no lock.
  std::map<uint64_t, std::shared_ptr<Group>> by_engine_region_;
  std::atomic<size_t> send_index_groups_{0};
  std::map<std::string, std::shared_ptr<Peer>> peers_;  // by host:port
  // Connection attempts by host:port (under mutex_): the last asked for
  // and the last done (numbers from dial_attempts_), and why the last done
  // failed. One entry per backup address ever dialled: a handful.
  struct Dialing {
    BackupTarget target;
    uint64_t asked = 0;
    uint64_t done = 0;
    Status failure;
  };
  std::map<std::string, Dialing> dialing_;
  uint64_t dial_attempts_ = 0;
  std::condition_variable dial_work_;  // an attempt asked for, or the end
  bool running_ = true;
  // Probes asked (Probe) and the last one the replication thread answered,
  // at the top of its loop (under mutex_).
  uint64_t probes_asked_ = 0;
  uint64_t probes_answered_ = 0;
  // When the replication thread's current turn began (steady clock, ns):
  // how fresh what it last saw of its backups is (BackupStalled).
  std::atomic<int64_t> turn_began_ns_{0};
  std::atomic<uint64_t> stream_failures_{0};  // ReplicatorStats
  std::atomic<uint64_t> open_retries_{0};
  // Held through a turn (Turn): the replication thread's, or a Drive's.
  // The connections to backups are used under it only.
  std::mutex turn_mutex_;
  std::atomic<uint64_t> drives_{0};
  std::thread thread_;
  std::thread catch_up_reader_;
  std::thread connector_;
  ReplicatorStats stats_;
};

}  // namespace kvs::replication

#endif  // KVS_REPLICATION_REPLICATOR_H_
