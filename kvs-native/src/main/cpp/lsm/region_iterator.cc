#include "lsm/region_iterator.h"

#include "lsm/record_reader.h"
#include "lsm/region.h"

namespace kvs::lsm {

// One input: an L0 table (newest visible version per key) or a level.
struct RegionIterator::Source {
  std::shared_ptr<L0Table> table;
  std::unique_ptr<L0Table::Iterator> table_iterator;
  std::shared_ptr<Level> level;
  std::unique_ptr<btree::TreeReader::Iterator> level_iterator;
  uint64_t snapshot_lsn = 0;

  bool Valid() const {
    return table ? table_iterator->Valid() : level_iterator->Valid();
  }
  std::string_view key() const {
    return table ? table_iterator->entry().key : level_iterator->key();
  }
  Status status() const {
    return table ? Status::Ok() : level_iterator->status();
  }
  // Skips L0 versions newer than the snapshot.
  void SkipInvisible() {
    while (table && table_iterator->Valid() &&
           table_iterator->entry().lsn > snapshot_lsn) {
      table_iterator->Next();
    }
  }
  void Seek(std::string_view target) {
    if (table) {
      table_iterator->Seek(target);
      SkipInvisible();
    } else {
      level_iterator->Seek(target);
    }
  }
  // Moves past every version of the current key.
  void NextKey() {
    if (table) {
      const std::string current(table_iterator->entry().key);
      do {
        table_iterator->Next();
      } while (table_iterator->Valid() &&
               table_iterator->entry().key == current);
      SkipInvisible();
    } else {
      level_iterator->Next();
    }
  }
  // Backward: moves to the newest visible version of the last key < `key`.
  // A table, backward: moves to the newest visible version of the last key
  // < `key`.
  void PrevKeyFrom(std::string key) {
    // Each pass steps back over one key none of whose versions is visible.
    while (true) {
      table_iterator->SeekBefore(key);
      if (!table_iterator->Valid()) return;
      key.assign(table_iterator->entry().key);
      if (SettleAt(key)) return;
    }
  }
  // A table at `key`: moves to its newest visible version; false (and
  // invalid or elsewhere) if it has none.
  bool SettleAt(std::string_view key) {
    const std::string wanted(key);
    table_iterator->Seek(wanted, snapshot_lsn);
    return table_iterator->Valid() && table_iterator->entry().key == wanted;
  }
  // Backward: moves to the newest visible version of the last key <= target.
  void SeekForPrev(std::string_view target) {
    if (!table) {
      level_iterator->SeekForPrev(target);
      return;
    }
    if (!SettleAt(target)) PrevKeyFrom(std::string(target));
  }
  void SeekToLast() {
    if (!table) {
      level_iterator->SeekToLast();
      return;
    }
    table_iterator->SeekToLast();
    if (!table_iterator->Valid()) return;
    const std::string last(table_iterator->entry().key);
    if (!SettleAt(last)) PrevKeyFrom(last);
  }
  // Backward: moves before every version of the current key.
  void PrevKey() {
    if (table) {
      PrevKeyFrom(std::string(table_iterator->entry().key));
    } else {
      level_iterator->Prev();
    }
  }
  bool IsTombstone() const {
    return table ? table_iterator->entry().kind == kL0Tombstone
                 : level_iterator->value().kind == btree::EntryKind::kDelete;
  }
};

RegionIterator::RegionIterator(const Region* region, uint64_t snapshot_lsn,
                               std::vector<std::shared_ptr<L0Table>> tables,
                               std::vector<std::shared_ptr<Level>> levels,
                               std::optional<std::string> upper_bound,
                               std::optional<std::string> lower_bound)
    : region_(region),
      snapshot_lsn_(snapshot_lsn),
      upper_bound_(std::move(upper_bound)),
      lower_bound_(std::move(lower_bound)) {
  for (auto& table : tables) {
    auto source = std::make_unique<Source>();
    source->table_iterator = std::make_unique<L0Table::Iterator>(table.get());
    source->table = std::move(table);
    source->snapshot_lsn = snapshot_lsn;
    sources_.push_back(std::move(source));
  }
  for (auto& level : levels) {
    auto source = std::make_unique<Source>();
    source->level_iterator =
        std::make_unique<btree::TreeReader::Iterator>(&level->tree());
    source->level = std::move(level);
    sources_.push_back(std::move(source));
  }
}

RegionIterator::~RegionIterator() = default;

void RegionIterator::SeekToFirst() {
  Position(lower_bound_ ? std::string_view(*lower_bound_) : std::string_view(),
           false);
}

void RegionIterator::Seek(std::string_view target) {
  Position(lower_bound_ && target < *lower_bound_
               ? std::string_view(*lower_bound_)
               : target,
           false);
}

void RegionIterator::Next() {
  const std::string current = key_;
  Position(current, true);
}

void RegionIterator::Position(std::string_view target, bool exclusive) {
  const std::string bound(target);
  if (backward_) {
    // The sources stand before the key: each is sought forward again.
    backward_ = false;
    for (auto& source : sources_) {
      source->Seek(bound);
      if (exclusive && source->Valid() && source->key() == bound) {
        source->NextKey();
      }
    }
    FindLive();
    return;
  }
  for (auto& source : sources_) {
    if (exclusive) {
      // Moving forward from the current key: an exhausted source stays
      // exhausted, one past the key keeps its place, and one at the key
      // steps over it -- no source descends its tree again.
      if (source->Valid() && source->key() == bound) {
        source->NextKey();
      }
      continue;
    }
    source->Seek(bound);
  }
  FindLive();
}

void RegionIterator::SeekToLast() {
  if (upper_bound_) {
    PositionBackward(*upper_bound_, /*exclusive=*/true, /*step=*/false);
    return;
  }
  backward_ = true;
  for (auto& source : sources_) {
    source->SeekToLast();
  }
  FindLive();
}

void RegionIterator::SeekForPrev(std::string_view target) {
  if (upper_bound_ && target >= *upper_bound_) {
    PositionBackward(*upper_bound_, /*exclusive=*/true, /*step=*/false);
    return;
  }
  PositionBackward(target, /*exclusive=*/false, /*step=*/false);
}

void RegionIterator::Prev() {
  const std::string current = key_;
  PositionBackward(current, /*exclusive=*/true, /*step=*/true);
}

void RegionIterator::PositionBackward(std::string_view target, bool exclusive,
                                      bool step) {
  const std::string bound(target);
  const bool from_here = step && backward_;
  backward_ = true;
  for (auto& source : sources_) {
    if (from_here) {
      // Moving back from the current key: a source before it keeps its
      // place, one at it steps back over it.
      if (source->Valid() && source->key() == bound) {
        source->PrevKey();
      }
      continue;
    }
    source->SeekForPrev(bound);
    if (exclusive && source->Valid() && source->key() == bound) {
      source->PrevKey();
    }
  }
  FindLive();
}

void RegionIterator::FindLive() {
  valid_ = false;
  while (true) {
    // The next key in the direction of travel (the smallest forward, the
    // largest backward); the newest source holding it (lowest index) decides.
    int chosen = -1;
    for (size_t i = 0; i < sources_.size(); ++i) {
      Source& source = *sources_[i];
      if (!source.status().ok()) {
        status_ = source.status();
        return;
      }
      if (source.Valid() &&
          (chosen < 0 ||
           (backward_ ? sources_[chosen]->key() < source.key()
                      : source.key() < sources_[chosen]->key()))) {
        chosen = static_cast<int>(i);
      }
    }
    if (chosen < 0) {
      return;
    }
    key_.assign(sources_[chosen]->key());
    if (backward_ ? lower_bound_ && key_ < *lower_bound_
                  : upper_bound_ && key_ >= *upper_bound_) {
      return;
    }
    current_source_ = static_cast<size_t>(chosen);
    if (!sources_[chosen]->IsTombstone()) {
      valid_ = true;
      return;
    }
    // Hidden: move every source past this key and continue.
    for (auto& source : sources_) {
      if (source->Valid() && source->key() == key_) {
        if (backward_) {
          source->PrevKey();
        } else {
          source->NextKey();
        }
      }
    }
  }
}

Status RegionIterator::value(std::string* value) const {
  const Source& source = *sources_[current_source_];
  if (source.table) {
    return region_->ResolveL0(source.table_iterator->entry(), value);
  }
  return region_->ResolveLevel(key_, source.level_iterator->value(), value);
}

Status RegionIterator::ReadPairs(size_t limit, size_t max_bytes,
                                 std::vector<Pair>* pairs, bool backward) {
  struct Pending {
    size_t pair;
    uint64_t device_offset;
    uint32_t size;
  };
  std::vector<Pending> pending;
  const size_t first = pairs->size();
  size_t bytes = 0;
  while (valid_ && pairs->size() - first < limit &&
         (bytes < max_bytes || pairs->size() == first)) {
    Pair& pair = pairs->emplace_back();
    pair.key = key_;
    const Source& source = *sources_[current_source_];
    if (source.level != nullptr &&
        source.level_iterator->value().kind == btree::EntryKind::kPutInLog) {
      const btree::LeafValue& leaf = source.level_iterator->value();
      pending.push_back(
          {pairs->size() - 1, leaf.log_offset, leaf.log_record_size_bytes});
      bytes += key_.size() + leaf.log_record_size_bytes;
      region_->value_read_bytes_.fetch_add(leaf.log_record_size_bytes,
                                           std::memory_order_relaxed);
    } else {
      KVS_RETURN_IF_ERROR(value(&pair.value));
      bytes += key_.size() + pair.value.size();
    }
    if (backward) {
      Prev();
    } else {
      Next();
    }
    KVS_RETURN_IF_ERROR(status_);
  }
  if (pending.empty()) {
    return Status::Ok();
  }
  // `pairs` no longer grows: keys and value slots are stable.
  std::vector<RecordReader::ValueRead> reads;
  reads.reserve(pending.size());
  for (const Pending& p : pending) {
    Pair& pair = (*pairs)[p.pair];
    reads.push_back({p.device_offset, p.size, pair.key, &pair.value});
  }
  return region_->context_.records->ReadValues(reads);
}

}  // namespace kvs::lsm
