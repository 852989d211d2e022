// RegionService: serves wire-protocol requests (docs/PROTOCOL.md) from
// engine regions -- the request handler behind both transports. Regions are
// attached by id with their epoch and placement (role and key range); a
// request for a region not attached, or for a key outside its range, gets
// WRONG_REGION, one with another epoch STALE_EPOCH, one for a region held
// as a backup NOT_PRIMARY.
//
// Value-log replication (replication/): once EnableReplication names the
// fabric server, a primary placed with backups replicates every write to
// them before answering, and the service answers the replication messages
// a primary sends it for the regions it holds as a backup.
//
// Doors: what a request may do is decided by the connection it came on,
// never by its bytes. A request with no session (the client door, JNI) or
// from a client's fabric connection is a client request, whatever its first
// bytes say; replication messages are taken only from a peer's fabric
// connection (one that proved the cluster secret, where there is one:
// channel/bootstrap_auth.h), an OPEN only with the proof of the region's
// stream key (replication_format.h), and the stream's later messages only
// from the connection its OPEN came on.
//
// Lifetimes: an attached engine region is used by requests in flight; each
// attachment has a gate (util/gate.h) they pass, and Detach, a re-attach
// with another region object, and PromoteBackup close it -- waiting for the
// requests inside -- before they return, so the caller may free the region
// right after.
//
// A shard never waits (a thread that ends turns, util/turns.h): a read
// runs with device reads refused (io/device_reads.h), and one that needed
// the device runs again on the deferred pool; a write that might wait for
// the engine or the device (Region::WriteMayWait: its L0 full with a
// compaction behind, its log about to write a chunk or roll a segment), a
// write that syncs and any request of an alone group go there at once
// (an fdatasync takes milliseconds). The pool (deferred_request_threads
// threads, at most deferred_requests_max requests waiting, beyond that they run
// on the shard, waiting) answers through `respond` as the replication thread
// does. A client's requests in flight at once may so be answered out of
// order (as they may be by any transport); one sent after another's answer
// always runs after it.
//
// Thread safety: Handle may run on many threads at once; Attach and Detach
// may run concurrently with it.

#ifndef KVS_SERVICE_REGION_SERVICE_H_
#define KVS_SERVICE_REGION_SERVICE_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "channel/server.h"
#include "engine/engine.h"
#include "lsm/region.h"
#include "replication/contents_digest.h"
#include "replication/replica_adoption.h"
#include "replication/replica_sink.h"
#include "replication/replicator.h"
#include "replication/send_index_sink.h"
#include "service/held_requests.h"
#include "service/request_metrics.h"
#include "util/gate.h"
#include "util/thread_pool.h"
#include "wire/messages.h"

namespace kvs::service {

// Where a region sits in the cluster, as this server holds it.
struct Placement {
  bool primary = true;  // a backup answers client requests NOT_PRIMARY
  std::string start;    // the key range [start, end); no end: unbounded
  std::optional<std::string> end;
  // A primary's backups (their fabric servers): its writes are replicated
  // to them and acknowledged once every required one holds them
  // (replication/replicator.h, "Membership"). Empty: none.
  std::vector<replication::BackupTarget> backups;
  // A primary's minimum of replicas in sync (itself counted) for a write
  // to be accepted; fewer refuse writes with NOT_ENOUGH_REPLICAS.
  size_t min_replicas = 1;
  // The region is meant to have backups (its cluster's replication factor
  // is above one), listed or not: its primary replicates (needs
  // replication enabled), and while no backup holds its writes (none
  // listed, or every one joining) it acknowledges a write, and answers a
  // read, once what they touch is on its disk (replication/replicator.h,
  // "alone"). False with no backups: an unreplicated region, whose writes
  // are as durable as the engine makes them.
  bool replicated = false;
  // The server that leads the group (an id the caller chooses). A backup
  // re-attached at a new epoch under the same primary keeps its stream and
  // what it holds; under another it starts over.
  std::string primary_server;
  // A backup the master counts as joining: only then may a new send-index
  // stream start it over once it holds a replica (one in sync may be
  // promoted, so it must never forget what it holds).
  bool joining = false;
  // How: records the backups apply (build-index), or log segments and
  // compacted index segments (send-index).
  replication::ReplicationMode mode = replication::ReplicationMode::kBuildIndex;
  // The region's stream key at this epoch (the master's, replication_format.h
  // OPEN): a primary's new streams prove it; a backup takes a stream only
  // from an OPEN that does. Empty on a backup: it takes no stream.
  std::string stream_key;

  bool Contains(std::string_view key) const {
    return key >= std::string_view(start) &&
           (!end || key < std::string_view(*end));
  }
};

// What a promotion adopted and the wall time of each of its steps, so a
// region's unavailability after a failure can be attributed (the server
// logs it with every promotion).
struct PromotionReport {
  replication::AdoptionReport adoption;
  uint64_t drain_us = 0;  // requests in flight on the old region object
  // The old object closed (its compaction awaited, its logs synced),
  // after any other change of the region in progress.
  uint64_t close_us = 0;
  uint64_t adopt_us = 0;  // copies and levels made the region's own
  uint64_t open_us = 0;   // Region::Open: the logs replayed past the levels
};

class RegionService final : public channel::RequestHandler {
 public:
  // Serves `region` (not owned; must outlive its attachment) as `region_id`
  // at `epoch`, placed as `placement` (default: primary of every key).
  // Attaching again replaces the epoch, region or placement; with another
  // region object, returns once no request uses the old one. A primary
  // replicating (backups, or a minimum of replicas above one) has its
  // replication group opened before writes are let in.
  //
  // Refused (STALE_EPOCH, nothing changed): a send-index backup not joining
  // under the primary whose stream into this region was cut here -- its
  // sink dropped by Detach or by an attachment that started over, while
  // that primary went on writing into the buffers it had (one-sided writes
  // cannot be refused, so it may have counted writes nobody applies). The
  // master counts such a backup in sync; it must be opened joining, so the
  // primary starts a new stream and its catch-up sends what the cut lost.
  // Cleared by that stream's OPEN, or once this server leads the region.
  Status Attach(uint64_t region_id, uint64_t epoch, lsm::Region* region,
                Placement placement = {});
  // Stops serving `region_id` and returns once no request uses its engine
  // region (the caller may free it then); a primary hands its last records
  // to its backups, a build-index backup applies what its buffers hold.
  void Detach(uint64_t region_id);
  // Detach, reporting whether a primary's last records reached every backup
  // of its group (Replicator::Close: OK, or why not within the timeout):
  // what a split needs before its commit, so that every copy of the region
  // holds what the primary's does. OK for a region not held or held
  // without backups.
  Status DetachFlushed(uint64_t region_id);
  // DetachFlushed for a split or a merge: the client requests that reach
  // the region from now on are held (service/held_requests.h) for at most
  // `hold`, until a region that takes it over is attached here (TakeOver),
  // it is attached again, or the hold ends; then they run again. A
  // detach that fails ends the hold at once (they are refused).
  Status DetachSealed(uint64_t region_id, std::chrono::milliseconds hold);
  // Region `region_id`, attached here, takes over the client requests
  // addressed to `predecessors` (the parent it was split from, the regions
  // merged into it), which this server no longer serves: such a request
  // runs in it when it leads it and every key the request names lies in
  // its range (a put, delete, get or multi-get; a scan is refused
  // WRONG_REGION, its client's map does not know where the region ends),
  // exactly as if it had been addressed to it at its epoch -- the client's
  // map still names the predecessor, whose successors this server leads.
  // Held requests of the predecessors run again now. The last
  // limits::region_successors_max predecessors are remembered.
  void TakeOver(uint64_t region_id, const std::vector<uint64_t>& predecessors);

  // The engine the attached regions live in (not owned; it must outlive
  // the service): Send-Index taps its regions' log appends and
  // compactions, and keeps the copies of the regions it backs up on its
  // volume. Call before EnableReplication.
  void UseEngine(engine::Engine* engine);

  // Replication over the fabric: backups take replica buffers on the
  // connections primaries open to them; primaries connect to their backups
  // with `endpoint`. Regions attached before keep their placement until
  // attached again.
  // `timeout` bounds a write's wait for its backups (replication/
  // replicator.h) and a stream's messages; `stall_timeout` how long a
  // backup may take none of the writes waiting for it before its stream
  // fails. `secret`: the cluster secret the connections to backups prove
  // (channel/bootstrap_auth.h; empty: none).
  void EnableReplication(
      const fabric::EndpointOptions& endpoint,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(10'000),
      const std::string& secret = std::string(),
      std::chrono::milliseconds stall_timeout =
          replication::ReplicatorOptions{}.stall_timeout);
  // Closes every stream and replica buffer; before the fabric server stops.
  void DisableReplication();
  ~RegionService() override;

  // channel::RequestHandler: a malformed request gets an INVALID_ARGUMENT
  // reply (with request id 0 if even the header is unreadable).
  // Replication control messages need `session` (the fabric connection).
  // A replicated write answers once its backups hold it, on the
  // replication thread (HandleAsync); Handle waits for that.
  void Handle(channel::Session* session, std::string_view request,
              std::string* reply) override;
  void HandleAsync(channel::Session* session, std::string_view request,
                   Respond respond) override;
  // Replication control messages (a backup's side): never behind client
  // writes, which may be waiting for this server's own backups.
  bool IsControl(std::string_view request) const override;
  // Drives the replication streams (Replicator::Drive).
  AnswerWatch EndOfTurn(bool may_watch) override;
  void AnswersArrived() override;

  // Executes and encodes, for transports that hold a decoded request
  // already, handing the reply to `respond` (RequestHandler::HandleAsync).
  void ExecuteAsync(const wire::Request& request, Respond respond);

  // The levels installed by Send-Index for `region_id`, held here as a
  // backup (backup offsets); NotFound if it has no Send-Index stream.
  Status BackupLevels(uint64_t region_id,
                      std::map<size_t, lsm::LevelDescriptor>* levels) const;
  // A digest of what `region_id`, held here as a backup, would serve if
  // promoted now, without changing anything: a Send-Index backup's from its
  // stream's replica (replication/replica_digest.h); a Build-Index
  // backup's from its own region with the records its stream holds beyond
  // it (ReplicaSink::Pending), scanned under this service's lock (which
  // keeps the region attached meanwhile). NotFound for a region not held,
  // InvalidArgument for a primary (it serves its region:
  // replication::DigestRegion) or a Send-Index backup before its stream's
  // OPEN.
  Status ReplicaDigest(uint64_t region_id,
                       replication::ContentsDigest* digest) const;
  // The copies of `region_id`'s `kind` log held here as its backup.
  Status BackupCopies(
      uint64_t region_id, log::LogKind kind,
      std::map<uint64_t, replication::MirroredSegment>* copies) const;
  // Promotes the Send-Index replica of cluster region `region_id`, engine
  // region `engine_name` (failure recovery, docs/ARCHITECTURE.md): ends
  // the region's stream here if one is attached (later messages are
  // refused), detaches it, and has the engine reopen the region as the
  // owner of its copies and installed levels (replication/
  // replica_adoption.h, with what landed in the stream's buffers), which
  // replays the logs past the levels to a point in time. `*region`: the
  // reopened region (the old object is gone; null if reopening failed).
  // The caller attaches it as primary. InvalidArgument if the region holds
  // no replica (replication::HoldsReplica). `*report`: what was adopted and
  // how long each step took.
  // `bounds`: the keys the region serves (its placement's range), which the
  // adopted region keeps to (replication::AdoptReplica).
  Status PromoteBackup(uint64_t region_id, std::string_view engine_name,
                       const lsm::KeyBounds& bounds, lsm::Region** region,
                       PromotionReport* report);
  // Whether engine region `engine_name` holds a Send-Index replica (its
  // levels and copies are a primary's); false for one not on the volume.
  bool HoldsReplica(std::string_view engine_name) const;
  // For `region_id` held here as a primary: each backup's state, in the
  // order of its placement (Replicator::BackupStates); empty for a region
  // not held as a primary or held without backups.
  std::vector<replication::BackupState> BackupStates(uint64_t region_id) const;
  // How far each of those backups is behind (Replicator::BackupLags); empty
  // as for BackupStates.
  std::vector<replication::BackupLag> BackupLags(uint64_t region_id) const;
  // Why each of those backups' streams failed (Replicator::BackupFailures):
  // an empty text for one that did not.
  std::vector<std::string> BackupFailures(uint64_t region_id) const;
  // Summary of BackupStates: 1 if every backup is in sync (also with no
  // backups), -1 if a backup's stream failed (the master reopens the
  // region), 0 while one is caught up; 0 for a region not held as a
  // primary.
  int BackupsCaughtUp(uint64_t region_id) const;
  // Fencing (docs/ARCHITECTURE.md "Failure recovery"): once RequireLease
  // was called, primaries answer client requests only while a lease holds,
  // and none before the first RenewLease: for `valid_for_ns` from each
  // renewal (a lease shorter than the server's ZooKeeper session, renewed
  // by the server while its session holds); outside it they answer
  // NOT_PRIMARY. Without RequireLease or a renewal no lease is enforced (a
  // service outside a cluster). A server in a cluster calls RequireLease
  // before it attaches anything.
  void RequireLease();
  void RenewLease(int64_t valid_for_ns);
  bool LeaseHeld() const;
  replication::ReplicatorStats ReplicationStats() const;
  // The watchdog's probe of the replication thread (Replicator::Probe);
  // true without one. Never blocks: false if the service's lock is held
  // exclusively at that instant.
  bool ProbeReplication();
  // Summed over the streams this server backs up now (index_cpu_ns also
  // counts Build-Index backups applying records: their index upkeep).
  replication::SendIndexSinkStats BackupStats() const;
  // CPU the request threads spent applying client writes to their regions
  // (the engine's insert: log append and L0), since the service started.
  // Estimated: one write in kInsertSampleEvery is timed with the thread CPU
  // clock (a system call, too dear for every write) and counted that many
  // times over.
  uint64_t InsertCpuNanos() const {
    return insert_cpu_ns_.load(std::memory_order_relaxed);
  }
  static constexpr uint64_t kInsertSampleEvery = 16;
  // The answer to a replicated write once `held` says what its backups hold
  // (`wrote`: it changed the region here, so a lapsed lease leaves its
  // outcome unknown).
  std::string WriteAnswer(const wire::Reply& reply, Status held,
                          uint64_t region_id, bool wrote) const;
  // Client requests held now for regions sealed or retired here
  // (DetachSealed).
  size_t held_requests() const { return held_.held(); }
  // What client requests were answered, and how fast (monitoring).
  RequestMetrics& request_metrics() { return request_metrics_; }
  const RequestMetrics& request_metrics() const { return request_metrics_; }

 private:
  // The replicator streaming region_id's writes, if this server is its
  // primary with backups; null otherwise. The streams' state is read from it
  // outside this service's lock.
  std::shared_ptr<replication::Replicator> ReplicatorOfPrimary(
      uint64_t region_id) const;
  // Counts `respond`'s reply in request_metrics_ (when they are on).
  Respond Observed(Respond respond);
  // ExecuteAsync without counting (the caller counts). `on_shard`: the
  // caller must not wait (see "A shard never waits" above).
  void Execute(const wire::Request& request, Respond respond, bool on_shard);
  // Runs `request` again where it may wait: on the deferred pool, or here
  // when the pool is full.
  void Defer(const wire::Request& request, Respond respond);
  // Defer for a request this service encoded (`bytes`).
  void DeferEncoded(std::string bytes, Respond respond);
  // Queues an encoded request on the pool, its place in
  // deferred_requests_ taken.
  void SubmitDeferred(std::string bytes, Respond respond);
  // `request`, addressed to a region not attached here, readdressed to the
  // region that took it over (TakeOver) if one attached here leads every
  // key it names; nullopt otherwise. Under mutex_.
  std::optional<wire::Request> Redirected(const wire::Request& request) const;
  struct Attached {
    uint64_t epoch;
    lsm::Region* region;
    // What requests using `region` pass (see "Lifetimes"); a new one with
    // every new region object.
    std::shared_ptr<Gate> gate;
    // Shared, immutable: a request takes a reference, not a copy.
    std::shared_ptr<const Placement> placement;
    // Held as a backup: where the primary's records land (after OPEN).
    std::shared_ptr<replication::ReplicaSink> sink;
    std::shared_ptr<replication::SendIndexSink> index_sink;  // send-index
    // The epoch of the OPEN that made the sink: its stream's messages may
    // carry any epoch from there to the attachment's (the primary stayed).
    uint64_t stream_epoch = 0;
    // The connection the sink's OPEN came on: the only one its stream's
    // later messages are taken from (see "Doors").
    uint64_t stream_connection = 0;
  };
  // Closes `gate` (if any), waiting for the requests inside; call without
  // mutex_ held.
  static void Drain(const std::shared_ptr<Gate>& gate);
  // Replication messages, from a peer's connection `session` only.
  void HandleReplication(channel::Session* session, std::string_view message,
                         std::string* reply);
  void HandleIndexControl(channel::Session* session, std::string_view message,
                          std::string* reply);
  // OK if `it` (of regions_, under mutex_) is a region held as a backup
  // whose current stream may send a message at `epoch` (an OPEN: exactly
  // the attachment's epoch) on connection `connection` (an OPEN: any);
  // else WRONG_REGION, STALE_EPOCH or INVALID_ARGUMENT.
  Status CheckBackup(std::map<uint64_t, Attached>::const_iterator it,
                     uint64_t region_id, uint64_t epoch, bool open,
                     uint64_t connection) const;
  // The status for a request outside what `attached` serves, or OK.
  static Status CheckPlacement(const wire::Request& request,
                               const Attached& attached);
  static Status LeaseLapsed(uint64_t region_id);
  // A backup's stream cut here (see Attach): the primary it came from, and
  // the epoch of the attachment it was cut at.
  struct Cut {
    std::string primary_server;
    uint64_t epoch = 0;
  };
  // The cut that ending `attached` makes: if it is a backup's with a
  // stream open into it (a sink), else none.
  static std::optional<Cut> CutOf(const Attached& attached);
  mutable std::shared_mutex mutex_;
  std::map<uint64_t, Attached> regions_;
  // Per region whose backup stream was cut here and not opened again since
  // (Attach); at most one entry per region this process held.
  std::map<uint64_t, Cut> cut_;
  // Per region split or merged here: the regions that took it over
  // (TakeOver), the oldest forgotten first beyond
  // limits::region_successors_max.
  std::map<uint64_t, std::vector<uint64_t>> successors_;  // under mutex_
  std::deque<uint64_t> successor_order_;                  // under mutex_
  // Whether a lease is enforced (RequireLease), and the steady_clock
  // nanoseconds it runs until (0: none granted yet).
  std::atomic<bool> lease_required_{false};
  std::atomic<int64_t> lease_deadline_ns_{0};
  std::atomic<uint64_t> inserts_{0};
  // A region without replication serialises its writes per key stripe, so
  // that nothing comes between what a compare-and-set or an increment reads
  // and what it writes (a replicated one does in its group's write order).
  static constexpr size_t kWriteStripes = 64;
  std::array<std::mutex, kWriteStripes> write_stripes_;
  std::atomic<uint64_t> insert_cpu_ns_{0};
  RequestMetrics request_metrics_;
  engine::Engine* engine_ = nullptr;                     // under mutex_
  bool replicating_ = false;                             // under mutex_
  std::shared_ptr<replication::Replicator> replicator_;  // under mutex_
  // Requests a shard could not run without waiting (made at the first).
  std::mutex read_pool_mutex_;
  std::unique_ptr<ThreadPool> read_pool_;     // under read_pool_mutex_
  std::atomic<size_t> deferred_requests_{0};  // queued or running
  // Requests for regions sealed or retired here (DetachSealed).
  HeldRequests held_{[this](std::string bytes, Respond respond) {
    DeferEncoded(std::move(bytes), std::move(respond));
  }};
};

}  // namespace kvs::service

#endif  // KVS_SERVICE_REGION_SERVICE_H_
