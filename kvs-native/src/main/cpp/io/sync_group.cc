#include "io/sync_group.h"

namespace kvs::io {

uint64_t SyncGroup::Ticket() {
  std::lock_guard<std::mutex> lock(mutex_);
  return ++issued_;
}

Status SyncGroup::SyncThrough(uint64_t ticket) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (durable_ < ticket && failed_.ok()) {
    if (in_progress_) {
      synced_.wait(lock);
      continue;
    }
    in_progress_ = true;
    const uint64_t target = issued_;  // every write completed so far
    lock.unlock();
    const Status status = file_->Sync();
    lock.lock();
    in_progress_ = false;
    ++syncs_;
    if (status.ok()) {
      durable_ = target;
    } else {
      failed_ = status;
    }
    synced_.notify_all();
  }
  return failed_;
}

uint64_t SyncGroup::syncs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return syncs_;
}

}  // namespace kvs::io
