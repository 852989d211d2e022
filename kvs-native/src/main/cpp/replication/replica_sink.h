// ReplicaSink: a backup's end of one region's value-log replication.
//
// On OPEN it registers two replica buffers (kBufferBytes each), on the
// connection the OPEN came on, that the primary writes records into
// one-sidedly; the backup's CPU takes no part
// until a FLUSH names a buffer and how many bytes it holds. Build-Index:
// the backup then applies the buffer's records to its own region (its own
// write-ahead log, L0 and compactions), makes them durable, and clears the
// buffer for reuse (an atomic batch's records as one lsm::Region::
// WriteBatch). Closing applies whatever whole records the buffers hold
// that no FLUSH applied yet, the buffer being filled first: what the
// primary acknowledged but had not flushed, or flushed without the FLUSH
// having been taken here yet (it writes the other buffer meanwhile), and
// of those only whole batches (ValidPrefix).
//
// Thread safety: all methods may be called concurrently.

#ifndef KVS_REPLICATION_REPLICA_SINK_H_
#define KVS_REPLICATION_REPLICA_SINK_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "channel/server.h"
#include "lsm/region.h"
#include "replication/replication_format.h"
#include "util/status.h"

namespace kvs::replication {

struct SinkStats {
  uint64_t flushes = 0;
  uint64_t records_applied = 0;
  uint64_t bytes_applied = 0;
  uint64_t apply_cpu_ns = 0;  // CPU applying records (backup index upkeep)
};

class ReplicaSink {
 public:
  // Registers the buffers on the connection of `session` (used during the
  // call only; the buffers keep what they need of it).
  static Status Create(channel::Session* session, lsm::Region* region,
                       uint64_t region_id, std::unique_ptr<ReplicaSink>* sink);
  // Applies what the buffers hold that no FLUSH applied (the buffer being
  // filled, then the other), then releases the buffers.
  ~ReplicaSink();
  ReplicaSink(const ReplicaSink&) = delete;
  ReplicaSink& operator=(const ReplicaSink&) = delete;

  // The buffers, for the OPEN reply.
  std::vector<fabric::RemoteBuffer> buffers() const;
  // Applies buffer `control.buffer`'s first `control.bytes` bytes. The
  // flushes of a stream must come in sequence, alternating buffers.
  Status Flush(const Control& control);
  SinkStats stats() const;
  // A copy of the records this backup holds beyond its region, oldest
  // first: what closing (a promotion) would apply now. For comparing
  // replicas (service::RegionService::ReplicaDigest).
  std::string Pending() const;

 private:
  ReplicaSink(lsm::Region* region, uint64_t region_id);
  // The whole records `buffer` holds (its valid prefix).
  std::string_view ValidLocked(size_t buffer) const;
  Status ApplyLocked(size_t buffer, std::string_view bytes);

  lsm::Region* const region_;
  const uint64_t region_id_;
  mutable std::mutex mutex_;
  // Shared with the connection that owns them (channel::ReplicaBuffer).
  std::shared_ptr<channel::ReplicaBuffer> buffers_[kBuffers];
  uint64_t next_sequence_ = 0;
  size_t filling_ = 0;  // the buffer the primary writes into now
  SinkStats stats_;
};

}  // namespace kvs::replication

#endif  // KVS_REPLICATION_REPLICA_SINK_H_
