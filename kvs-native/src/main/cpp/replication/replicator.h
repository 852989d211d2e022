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
// Failures: a backup that cannot be reached, breaks its connection or
// refuses a message fails the stream: its waiting and later writes fail
// with IO_ERROR naming the backup, until the region is opened again (the
// master raises the epoch and reopens it when the group is whole).
//
// Thread safety: all methods may be called concurrently.

#ifndef KVS_REPLICATION_REPLICATOR_H_
#define KVS_REPLICATION_REPLICATOR_H_

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
#include "replication/replication_format.h"
#include "util/status.h"

namespace kvs::replication {

struct BackupTarget {
  std::string host;  // the backup server's fabric bootstrap
  uint16_t port = 0;
};

struct ReplicatorOptions {
  fabric::EndpointOptions endpoint;  // this server's provider and node
  std::chrono::milliseconds timeout{10'000};
  // Bytes of queued records written with one one-sided write at most.
  size_t batch_bytes_max = 256u << 10;
};

struct ReplicatorStats {
  uint64_t records = 0;
  uint64_t bytes = 0;    // record bytes replicated (to each backup)
  uint64_t writes = 0;   // one-sided writes posted (all backups)
  uint64_t flushes = 0;  // FLUSH messages (all backups)
};

class Replicator {
 public:
  explicit Replicator(ReplicatorOptions options);
  // Closes every stream (flushing it) and every connection.
  ~Replicator();
  Replicator(const Replicator&) = delete;
  Replicator& operator=(const Replicator&) = delete;

  // Starts replicating `region_id` at `epoch` to `backups`, replacing an
  // earlier stream of the region (closed first).
  void Open(uint64_t region_id, uint64_t epoch,
            std::vector<BackupTarget> backups);
  // Flushes what the region's stream holds to its backups and forgets it;
  // bounded by the timeout. OK if the region has no stream.
  Status Close(uint64_t region_id);
  bool Replicates(uint64_t region_id) const;

  // Runs `apply` (the local write) and, if it succeeds, replicates
  // `record`; returns once every backup holds it, or why not.
  Status Write(uint64_t region_id, const Record& record,
               const std::function<Status()>& apply);

  ReplicatorStats stats() const;

 private:
  struct Stream;
  struct Peer;
  void Run();
  bool Pump(Stream* stream);
  // Sends FLUSH of the buffer being filled to every backup (caller holds
  // the stream's mutex); false if the stream failed.
  bool SendFlush(Stream* stream, std::unique_lock<std::mutex>* lock);
  std::shared_ptr<Peer> PeerFor(const BackupTarget& target, Status* status);
  void Fail(Stream* stream, const Status& status);

  const ReplicatorOptions options_;
  mutable std::mutex mutex_;  // streams_, peers_, running_
  std::condition_variable work_;
  std::map<uint64_t, std::shared_ptr<Stream>> streams_;
  std::map<std::string, std::shared_ptr<Peer>> peers_;  // by host:port
  bool running_ = true;
  std::thread thread_;
  ReplicatorStats stats_;
};

}  // namespace kvs::replication

#endif  // KVS_REPLICATION_REPLICATOR_H_
