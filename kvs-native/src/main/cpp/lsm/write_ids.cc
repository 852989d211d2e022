#include "lsm/write_ids.h"

#include <algorithm>

namespace kvs::lsm {

void WriteIds::Record(log::WriteId id, uint64_t lsn, bool deleted,
                      std::string_view value) {
  if (!id.present()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  Applied applied{lsn, deleted,
                  value.size() == 8 ? std::string(value) : std::string()};
  const auto [it, inserted] = by_id_.try_emplace(id, applied);
  if (!inserted) {
    // The same id twice (a record replayed that the table holds already):
    // the later write is the one a retry must see.
    by_lsn_.erase(it->second.lsn);
    it->second = std::move(applied);
  }
  by_lsn_[lsn] = id;
  while (by_id_.size() > capacity_ && !by_lsn_.empty()) {
    const auto oldest = by_lsn_.begin();
    horizon_ = std::max(horizon_, oldest->first);
    by_id_.erase(oldest->second);
    by_lsn_.erase(oldest);
  }
}

std::optional<WriteIds::Applied> WriteIds::Find(log::WriteId id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = by_id_.find(id);
  if (it == by_id_.end()) return std::nullopt;
  return it->second;
}

uint64_t WriteIds::horizon() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return horizon_;
}

void WriteIds::Reset(uint64_t horizon) {
  std::lock_guard<std::mutex> lock(mutex_);
  by_id_.clear();
  by_lsn_.clear();
  horizon_ = horizon;
}

size_t WriteIds::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return by_id_.size();
}

}  // namespace kvs::lsm
