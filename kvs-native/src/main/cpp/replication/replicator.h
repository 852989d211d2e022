// Replicator: a primary's end of value-log replication, for every region
// this server is primary of.
//
// Per region a stream: on open it sends OPEN to each backup's server (over
// one fabric connection per backup server, shared by the streams) and gets
// two replica buffers per backup. A write is applied locally and its record
// queued under the stream's order lock (so backups see writes in the order
// the primary applied them); a replication thread writes queued records,
// batched, one-sidedly at the next offset of the buffer being filled on
// every backup; the writer returns once every backup's write completed. A
// full buffer is handed over with FLUSH (the backups apply it) while the
// other one fills; a stream switches back to a buffer only after its FLUSH
// was answered, so each backup applies records in order.
//
// Send-Index (ReplicationMode::kSendIndex): instead of records, the stream
// carries what the region reports through lsm::ReplicationTap (the Replicator
// is the engine's tap): log bytes written one-sidedly at their own offsets
// into per-(log, chain parity) buffers, FLUSH-TAIL when a segment is done or
// before an index segment that may point into a tail, each finished index
// segment through the index buffer with SHIP-SEGMENT, INSTALL-LEVEL
// (send_index_format.h, send_index_sink.h). Opening such a stream first
// reports the region's whole state (Region::ReportState: the catch-up),
// then its events in order. A write returns once every backup holds its log
// bytes.
//
// Failures: a backup that cannot be reached, breaks its connection or
// refuses a message fails the stream: its waiting and later writes fail
// with IO_ERROR naming the backup, until the region is opened again (the
// master raises the epoch and reopens it when the group is whole).
//
// Thread safety: all methods may be called concurrently.

#ifndef KVS_REPLICATION_REPLICATOR_H_
#define KVS_REPLICATION_REPLICATOR_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "channel/client.h"
#include "lsm/region.h"
#include "lsm/replication_tap.h"
#include "replication/replication_format.h"
#include "replication/send_index_format.h"
#include "util/status.h"

namespace kvs::replication {

struct BackupTarget {
  std::string host;  // the backup server's fabric bootstrap
  uint16_t port = 0;
};

enum class ReplicationMode : uint8_t {
  kBuildIndex = 0,  // records; every backup applies them to its own region
  kSendIndex = 1,   // log segments and compacted index segments
};

struct StreamEvent;  // replicator_stream.h

struct ReplicatorOptions {
  fabric::EndpointOptions endpoint;  // this server's provider and node
  std::chrono::milliseconds timeout{10'000};
  // Bytes of queued records written with one one-sided write at most.
  size_t batch_bytes_max = 256u << 10;
};

struct ReplicatorStats {
  uint64_t records = 0;
  uint64_t bytes = 0;           // record bytes replicated (to each backup)
  uint64_t writes = 0;          // one-sided writes posted (all backups)
  uint64_t flushes = 0;         // FLUSH and FLUSH-TAIL messages (all backups)
  uint64_t index_bytes = 0;     // index segment bytes (to each backup)
  uint64_t index_messages = 0;  // SHIP-SEGMENT and INSTALL-LEVEL (all)
  // CPU of the replication thread spent on index segments and levels
  // (the rest of its CPU carries log bytes), and of the engine's threads
  // copying them into the stream.
  uint64_t index_cpu_ns = 0;
};

class Replicator final : public lsm::ReplicationTap {
 public:
  explicit Replicator(ReplicatorOptions options);
  // Closes every stream (flushing it) and every connection.
  ~Replicator() override;
  Replicator(const Replicator&) = delete;
  Replicator& operator=(const Replicator&) = delete;

  // Starts replicating `region_id` at `epoch` to `backups`, replacing an
  // earlier stream of the region (closed first). Send-Index needs `region`
  // (whose state the stream starts with; its events must reach this
  // Replicator as the engine's tap).
  void Open(uint64_t region_id, uint64_t epoch,
            std::vector<BackupTarget> backups,
            ReplicationMode mode = ReplicationMode::kBuildIndex,
            lsm::Region* region = nullptr);
  // Flushes what the region's stream holds to its backups and forgets it;
  // bounded by the timeout. OK if the region has no stream.
  Status Close(uint64_t region_id);
  // Closes every stream (Close each).
  void CloseAll();
  // Ends `region_id`'s stream at once, without handing anything over: its
  // waiting and later writes fail with `why`. For a stream replaced by one
  // whose catch-up ships everything again.
  void Abandon(uint64_t region_id, const std::string& why);
  bool Replicates(uint64_t region_id) const;
  // Whether `region_id`'s stream is healthy and every backup holds what it
  // started with (Send-Index: the catch-up's state, index shipments
  // included; Build-Index has none), so each holds every write the region
  // acknowledged. False without a stream.
  bool CaughtUp(uint64_t region_id) const;
  // Whether `region_id`'s stream failed (a backup unreachable, a message
  // refused, a timeout): it stays failed until the region is opened again.
  bool Failed(uint64_t region_id) const;

  // Runs `apply` (the local write) and, if it succeeds, replicates
  // `record`; returns once every backup holds it, or why not.
  Status Write(uint64_t region_id, const Record& record,
               const std::function<Status()>& apply);

  ReplicatorStats stats() const;

  // lsm::ReplicationTap: events of regions with a Send-Index stream.
  void OnLogAppend(uint64_t engine_region_id, log::LogKind kind,
                   const log::AppendedBytes& appended) override;
  void OnIndexSegment(uint64_t engine_region_id, uint64_t segment,
                      std::string_view bytes) override;
  void OnLevelInstalled(uint64_t engine_region_id, size_t level,
                        const lsm::LevelDescriptor& descriptor,
                        std::optional<size_t> emptied,
                        uint64_t compacted_lsn) override;
  void OnLogReleased(
      uint64_t engine_region_id, log::LogKind kind,
      const std::vector<log::ReleasedSegment>& released) override;

 private:
  struct Stream;
  struct Peer;
  void Run();
  bool Pump(Stream* stream);
  // The opening states, common to both modes; true if it moved on.
  bool Connect(Stream* stream);
  // Posts batches not posted on every backup yet; false if the stream
  // failed (the lock is then released). `*progressed` is set if any was.
  bool PostBatches(Stream* stream, std::unique_lock<std::mutex>* lock,
                   bool* progressed);
  // Send-Index's ready state (replicator_send_index.cc).
  bool PumpSendIndex(Stream* stream);
  // Queues a Send-Index event of the stream of `engine_region_id`, if it
  // is live.
  void Queue(uint64_t engine_region_id, StreamEvent&& event);
  // Sends a Send-Index control message to every backup; `pending` (under
  // the stream's mutex) counts the replies outstanding.
  bool SendIndexControl(Stream* stream, const IndexControl& control,
                        size_t* pending, std::unique_lock<std::mutex>* lock);
  // Sends FLUSH-TAIL of log `log`'s buffer to every backup.
  bool SendFlushTail(Stream* stream, size_t log, bool sealed,
                     std::unique_lock<std::mutex>* lock);
  // Sends FLUSH of the buffer being filled to every backup (caller holds
  // the stream's mutex); false if the stream failed.
  bool SendFlush(Stream* stream, std::unique_lock<std::mutex>* lock);
  // Sends `message` (a control message named `what`) to every backup;
  // `pending` (under the stream's mutex) counts the replies outstanding.
  // False if the stream failed (the lock is then released).
  bool SendToBackups(Stream* stream, const std::string& message,
                     const std::string& what, size_t* pending,
                     std::unique_lock<std::mutex>* lock);
  std::shared_ptr<Peer> PeerFor(const BackupTarget& target, Status* status);
  void Fail(Stream* stream, const Status& status);

  const ReplicatorOptions options_;
  mutable std::mutex mutex_;  // streams_, peers_, running_
  std::condition_variable work_;
  std::map<uint64_t, std::shared_ptr<Stream>> streams_;
  // Send-Index streams by the engine's id of their region; its size, read
  // without the lock so events of other regions cost no lock.
  std::map<uint64_t, std::shared_ptr<Stream>> by_engine_region_;
  std::atomic<size_t> send_index_streams_{0};
  std::map<std::string, std::shared_ptr<Peer>> peers_;  // by host:port
  bool running_ = true;
  std::thread thread_;
  ReplicatorStats stats_;
};

}  // namespace kvs::replication

#endif  // KVS_REPLICATION_REPLICATOR_H_
