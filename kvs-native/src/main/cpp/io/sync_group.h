// Group commit of fdatasync calls on one file.
//
// Every log of every region on a volume writes to the same file, and one
// fdatasync makes all completed writes durable. Writers take a ticket after
// their write completes; SyncThrough(ticket) returns once an fdatasync that
// began after that write has finished, so one sync serves every writer that
// was waiting when it started.
//
// Errors are sticky: after a failed fdatasync the state of earlier writes is
// unknown, so every later SyncThrough fails too.
//
// Thread safety: all methods may be called concurrently.

#ifndef KVS_IO_SYNC_GROUP_H_
#define KVS_IO_SYNC_GROUP_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "io/file.h"
#include "util/status.h"

namespace kvs::io {

class SyncGroup {
 public:
  explicit SyncGroup(File* file) : file_(file) {}

  // Call after a write has completed; the ticket names it.
  uint64_t Ticket();
  // Returns once the write behind `ticket` is durable (or the sticky error).
  Status SyncThrough(uint64_t ticket);

  uint64_t syncs() const;

 private:
  File* const file_;
  mutable std::mutex mutex_;
  std::condition_variable synced_;
  uint64_t issued_ = 0;
  uint64_t durable_ = 0;
  bool in_progress_ = false;
  uint64_t syncs_ = 0;
  Status failed_;
};

}  // namespace kvs::io

#endif  // KVS_IO_SYNC_GROUP_H_
