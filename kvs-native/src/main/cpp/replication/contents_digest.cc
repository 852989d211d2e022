#include "replication/contents_digest.h"

#include <optional>

#include "btree/tree_reader.h"
#include "lsm/record_reader.h"
#include "lsm/region_iterator.h"
#include "util/hash.h"

namespace kvs::replication {
namespace {

// Pairs a scan reads per batch of device reads.
constexpr size_t kScanPairs = 256;
constexpr size_t kScanBytes = 4 << 20;

// The newest entry of each key across levels (newest first), tombstones
// included, in key order.
class MergedLevels {
 public:
  explicit MergedLevels(
      const std::vector<std::shared_ptr<lsm::Level>>& levels) {
    for (const auto& level : levels) {
      if (level == nullptr || level->descriptor().empty()) continue;
      iterators_.push_back(
          std::make_unique<btree::TreeReader::Iterator>(&level->tree()));
      iterators_.back()->SeekToFirst();
    }
    Pick();
  }

  bool Valid() const { return current_.has_value(); }
  // Require Valid(); valid until Next.
  std::string_view key() const { return key_; }
  btree::LeafValue value() const { return iterators_[*current_]->value(); }

  void Next() {
    // Every level at this key moves past it; the newest one last, since
    // key_ is a copy.
    for (auto& iterator : iterators_) {
      if (iterator->Valid() && iterator->key() == key_) iterator->Next();
    }
    Pick();
  }

  Status status() const {
    for (const auto& iterator : iterators_) {
      KVS_RETURN_IF_ERROR(iterator->status());
    }
    return Status::Ok();
  }

 private:
  // The smallest key among the levels; the newest level holding it wins.
  void Pick() {
    current_.reset();
    for (size_t i = 0; i < iterators_.size(); ++i) {
      if (!iterators_[i]->Valid()) continue;
      if (!current_ || iterators_[i]->key() < iterators_[*current_]->key()) {
        current_ = i;
      }
    }
    if (current_) key_.assign(iterators_[*current_]->key());
  }

  std::vector<std::unique_ptr<btree::TreeReader::Iterator>> iterators_;
  std::optional<size_t> current_;
  std::string key_;
};

Status LevelValue(lsm::RecordReader* records, std::string_view key,
                  const btree::LeafValue& value, std::string* read) {
  if (value.kind == btree::EntryKind::kPutInline) {
    read->assign(value.inline_bytes);
    return Status::Ok();
  }
  return records->ReadValue(value.log_offset, value.log_record_size_bytes, key,
                            read);
}

}  // namespace

uint64_t PairDigest::Hash(std::string_view key, std::string_view value) {
  return Hash64(value.data(), value.size(), Hash64(key.data(), key.size()));
}

Status CountLevelPairs(const std::vector<std::shared_ptr<lsm::Level>>& levels,
                       const lsm::KeyBounds& bounds, uint64_t* pairs,
                       uint64_t* non_empty) {
  *pairs = 0;
  *non_empty = 0;
  for (const auto& level : levels) {
    if (level != nullptr && !level->descriptor().empty()) ++*non_empty;
  }
  MergedLevels merged(levels);
  for (; merged.Valid(); merged.Next()) {
    if (merged.value().kind != btree::EntryKind::kDelete &&
        bounds.Contains(merged.key())) {
      ++*pairs;
    }
  }
  return merged.status();
}

Status DigestMerged(io::File* file,
                    const std::vector<std::shared_ptr<lsm::Level>>& levels,
                    const std::map<std::string, Overlay>& overlay,
                    const lsm::KeyBounds& bounds, ContentsDigest* digest) {
  digest->levels = 0;
  for (const auto& level : levels) {
    if (level != nullptr && !level->descriptor().empty()) ++digest->levels;
  }
  lsm::RecordReader records(file);
  PairDigest served;
  uint64_t level_pairs = 0;
  std::string value;
  MergedLevels merged(levels);
  auto next = overlay.begin();
  while (merged.Valid() || next != overlay.end()) {
    const bool from_levels =
        merged.Valid() && (next == overlay.end() ||
                           merged.key() <= std::string_view(next->first));
    const bool from_overlay =
        next != overlay.end() &&
        (!merged.Valid() || std::string_view(next->first) <= merged.key());
    if (from_levels) {
      const btree::LeafValue leaf = merged.value();
      const bool live = leaf.kind != btree::EntryKind::kDelete &&
                        bounds.Contains(merged.key());
      level_pairs += live ? 1 : 0;
      if (live && !from_overlay) {
        KVS_RETURN_IF_ERROR(LevelValue(&records, merged.key(), leaf, &value));
        served.Add(PairDigest::Hash(merged.key(), value));
      }
      merged.Next();
    }
    if (from_overlay) {
      if (next->second.put && bounds.Contains(next->first)) {
        served.Add(next->second.pair_hash);
      }
      ++next;
    }
  }
  KVS_RETURN_IF_ERROR(merged.status());
  digest->digest = served.digest();
  digest->pairs = served.pairs();
  digest->level_pairs = level_pairs;
  return Status::Ok();
}

Status DigestRegion(const lsm::Region& region, ContentsDigest* digest) {
  return DigestRegion(region, {}, digest);
}

Status DigestRegion(const lsm::Region& region,
                    const std::map<std::string, Overlay>& overlay,
                    ContentsDigest* digest) {
  *digest = {};
  const lsm::Region::Served served = region.ServedNow();
  std::unique_ptr<lsm::RegionIterator> it = region.NewIterator(std::nullopt);
  PairDigest pairs;
  auto next = overlay.begin();
  // The overlay's keys before `key` (all of them, without one).
  const auto overlay_before = [&](std::optional<std::string_view> key) {
    for (; next != overlay.end() && (!key || next->first < *key); ++next) {
      if (next->second.put) pairs.Add(next->second.pair_hash);
    }
  };
  std::vector<lsm::RegionIterator::Pair> batch;
  for (it->SeekToFirst(); it->Valid();) {
    batch.clear();
    KVS_RETURN_IF_ERROR(it->ReadPairs(kScanPairs, kScanBytes, &batch));
    for (const auto& pair : batch) {
      overlay_before(pair.key);
      if (next != overlay.end() && next->first == pair.key) {
        if (next->second.put) pairs.Add(next->second.pair_hash);
        ++next;
      } else {
        pairs.Add(PairDigest::Hash(pair.key, pair.value));
      }
    }
  }
  KVS_RETURN_IF_ERROR(it->status());
  overlay_before(std::nullopt);
  // The levels alone, from the same moment as the counts below.
  KVS_RETURN_IF_ERROR(CountLevelPairs(served.levels, region.bounds(),
                                      &digest->level_pairs, &digest->levels));
  digest->digest = pairs.digest();
  digest->pairs = pairs.pairs();
  digest->past_levels = served.l0_entries + overlay.size();
  digest->last_lsn = served.last_lsn;
  digest->compacted_lsn = served.compacted_lsn;
  return Status::Ok();
}

}  // namespace kvs::replication
