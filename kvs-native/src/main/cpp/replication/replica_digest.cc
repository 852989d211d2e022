#include "replication/replica_digest.h"

#include <algorithm>

#include "lsm/node_cache.h"
#include "util/limits.h"

namespace kvs::replication {
namespace {

// What the levels' node reads may cache: a digest reads each node once.
constexpr size_t kNodeCacheBytes = 8 << 20;
// Memory a record past the levels costs besides its key.
constexpr uint64_t kRecordOverheadBytes = 64;

// A put or delete past the levels, as replay finds it.
struct PastRecord {
  uint64_t lsn = 0;
  std::string key;
  Overlay overlay;
};

// Appends `kind`'s records past `compacted_lsn` from the chain a promotion
// would adopt; `*bytes` counts the memory they hold.
Status CollectRecords(const ReplicaSnapshot& replica, log::LogKind kind,
                      const std::map<uint64_t, MirroredSegment>& copies,
                      std::vector<PastRecord>* records, uint64_t* bytes) {
  io::File* file = replica.volume()->file();
  std::map<uint64_t, ChainPosition> chain;
  KVS_RETURN_IF_ERROR(
      PlanReplicaChain(file, kind, copies, replica.landed(), &chain));
  std::string segment;
  for (const auto& [chain_index, position] : chain) {
    if (!position.kept) continue;
    KVS_RETURN_IF_ERROR(
        ReadChainPosition(file, position, replica.landed(), &segment));
    const std::string_view view(segment);
    size_t offset = log::kSegmentHeaderBytes;
    while (offset < position.walk.end) {
      log::Record record;
      size_t size = 0;
      if (!log::DecodeRecord(view.substr(offset), position.walk.header.nonce,
                             &record, &size)) {
        return Status::Corruption(
            "a record of the " + std::string(log::LogKindName(kind)) +
            " log's chain position " + std::to_string(chain_index) +
            " changed between two reads");
      }
      offset += size;
      const bool put = record.type == log::RecordType::kPut;
      if ((!put && record.type != log::RecordType::kDelete) ||
          record.lsn <= replica.compacted_lsn) {
        continue;
      }
      *bytes += record.key.size() + kRecordOverheadBytes;
      if (*bytes > limits::replica_digest_records_bytes_max) {
        return Status::Busy(
            "the log records past this replica's levels hold more than " +
            std::to_string(limits::replica_digest_records_bytes_max) +
            " bytes of keys; try again after its primary compacted");
      }
      records->push_back(
          {record.lsn,
           std::string(record.key),
           {put, put ? PairDigest::Hash(record.key, record.value) : 0}});
    }
  }
  return Status::Ok();
}

}  // namespace

ReplicaSnapshot::~ReplicaSnapshot() {
  if (volume_ != nullptr) volume_->Unpin(pinned_);
}

void ReplicaSnapshot::Pin(alloc::Volume* volume,
                          std::vector<uint64_t> segments) {
  volume_ = volume;
  pinned_ = std::move(segments);
  volume_->Pin(pinned_);
}

void ReplicaSnapshot::AddLanded(log::LogKind kind, std::string_view bytes) {
  landed_bytes_.push_back(std::make_unique<std::string>(bytes));
  landed_.push_back({kind, *landed_bytes_.back()});
}

Status DigestReplica(const ReplicaSnapshot& replica,
                     const lsm::KeyBounds& bounds, ContentsDigest* digest) {
  *digest = {};
  std::vector<PastRecord> records;
  uint64_t bytes = 0;
  KVS_RETURN_IF_ERROR(CollectRecords(replica, log::LogKind::kSmall,
                                     replica.small_copies, &records, &bytes));
  KVS_RETURN_IF_ERROR(CollectRecords(replica, log::LogKind::kLarge,
                                     replica.large_copies, &records, &bytes));
  std::sort(
      records.begin(), records.end(),
      [](const PastRecord& a, const PastRecord& b) { return a.lsn < b.lsn; });
  for (size_t i = 1; i < records.size(); ++i) {
    if (records[i].lsn == records[i - 1].lsn) {
      return Status::Corruption("LSN " + std::to_string(records[i].lsn) +
                                " appears twice in the replica's logs");
    }
  }
  // Point in time, as recovery: up to the first LSN missing from both.
  size_t kept = 0;
  while (kept < records.size() &&
         records[kept].lsn == replica.compacted_lsn + kept + 1) {
    ++kept;
  }
  const uint64_t dropped = records.size() - kept;
  std::map<std::string, Overlay> overlay;
  for (size_t i = 0; i < kept; ++i) {
    overlay[std::move(records[i].key)] = records[i].overlay;
  }
  records.clear();
  io::File* file = replica.volume()->file();
  lsm::NodeCache nodes(file, kNodeCacheBytes);
  std::vector<std::shared_ptr<lsm::Level>> levels;  // newest first
  for (const auto& [number, descriptor] : replica.levels) {
    if (descriptor.empty()) continue;
    std::shared_ptr<lsm::Level> level;
    KVS_RETURN_IF_ERROR(lsm::Level::Open(file, &nodes, descriptor, &level));
    levels.push_back(std::move(level));
  }
  KVS_RETURN_IF_ERROR(DigestMerged(file, levels, overlay, bounds, digest));
  digest->past_levels = kept;
  digest->dropped = dropped;
  digest->last_lsn = replica.compacted_lsn + kept;
  digest->compacted_lsn = replica.compacted_lsn;
  return Status::Ok();
}

}  // namespace kvs::replication
