#include "lsm/write_ids.h"

#include <algorithm>

namespace kvs::lsm {

void WriteIds::Record(log::WriteId id, uint64_t lsn, bool deleted,
                      std::string_view value) {
  if (!id.present()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  Applied applied{lsn, deleted,
                  value.size() == 8 ? std::string(value) : std::string()};
  // The same id twice (a record replayed that the table holds already):
  // the later write is the one a retry must see.
  by_id_.insert_or_assign(id, std::move(applied));
  order_.emplace_back(lsn, id);
  // Forgets the oldest past the capacity (and stale entries at the front).
  // The horizon is the largest LSN forgotten: entries are recorded about in
  // LSN order, and one forgotten out of order is below it all the same.
  while (!order_.empty() &&
         (by_id_.size() > capacity_ || order_.size() > 2 * capacity_)) {
    const auto [oldest_lsn, oldest_id] = order_.front();
    order_.pop_front();
    const auto it = by_id_.find(oldest_id);
    if (it == by_id_.end() || it->second.lsn != oldest_lsn) continue;  // stale
    horizon_ = std::max(horizon_, oldest_lsn);
    by_id_.erase(it);
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
  order_.clear();
  horizon_ = horizon;
}

size_t WriteIds::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return by_id_.size();
}

}  // namespace kvs::lsm
