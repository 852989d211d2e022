#include "replication/replica_adoption.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "alloc/device_offset.h"
#include "alloc/metadata_batch.h"
#include "io/aligned_buffer.h"
#include "lsm/region.h"
#include "replication/log_mirror.h"
#include "util/coding.h"
#include "util/limits.h"

namespace kvs::replication {
namespace {

constexpr size_t kSegment = limits::segment_size_bytes;
constexpr size_t kBlock = 4096;

// What the records of one segment's bytes say.
struct Walk {
  bool header_valid = false;
  log::SegmentHeader header;
  size_t end = 0;      // just past the last record that checks out
  bool ended = false;  // that record is the segment's end record
  uint64_t put_bytes = 0;
  uint64_t max_lsn = 0;
};

Walk WalkRecords(std::string_view bytes) {
  Walk walk;
  if (bytes.size() < log::kSegmentHeaderBytes ||
      !log::DecodeSegmentHeader(bytes, &walk.header).ok()) {
    return walk;
  }
  walk.header_valid = true;
  size_t offset = log::kSegmentHeaderBytes;
  while (offset < bytes.size()) {
    log::Record record;
    size_t size = 0;
    if (!log::DecodeRecord(bytes.substr(offset), walk.header.nonce, &record,
                           &size)) {
      break;
    }
    offset += size;
    if (record.type == log::RecordType::kPut) walk.put_bytes += size;
    if (record.type == log::RecordType::kPut ||
        record.type == log::RecordType::kDelete) {
      walk.max_lsn = std::max(walk.max_lsn, record.lsn);
    }
    if (record.type == log::RecordType::kSegmentEnd) {
      walk.ended = true;
      break;
    }
  }
  walk.end = offset;
  return walk;
}

// One chain position of a log being adopted.
struct Position {
  std::optional<uint64_t> primary_segment;  // its log map entry, if any
  std::optional<uint64_t> backup_segment;   // its copy, if any
  std::string bytes;                        // the best bytes known
  bool from_buffer = false;
  Walk walk;
};

}  // namespace

std::string ReplicaMarkerKey(uint64_t region_id) {
  return lsm::Region::CatalogPrefix(region_id) + "replica";
}

bool HoldsReplica(const alloc::Volume& volume, uint64_t region_id) {
  return volume.CatalogGet(ReplicaMarkerKey(region_id)).has_value();
}

bool HoldsReplicaOf(const alloc::Volume& volume, uint64_t region_id,
                    uint64_t incarnation) {
  const std::optional<std::string> marker =
      volume.CatalogGet(ReplicaMarkerKey(region_id));
  return incarnation != 0 && marker.has_value() && marker->size() == 8 &&
         coding::DecodeFixed64(marker->data()) == incarnation;
}

Status AdoptReplica(alloc::Volume* volume, uint64_t region_id,
                    const std::vector<LandedLog>& landed,
                    AdoptionReport* report) {
  *report = {};
  io::File* file = volume->file();
  alloc::MetadataBatch batch;
  std::vector<uint64_t> reserved;
  const auto give_back = [&] {
    for (const uint64_t segment : reserved) volume->Unreserve(segment);
  };
  const std::string prefix = lsm::Region::CatalogPrefix(region_id);
  // The region's own earlier logs and their GC state go: the replica's
  // copies replace them.
  for (const auto& [key, value] : volume->CatalogScan(prefix + "log/")) {
    if (value.size() == 8) batch.Free(coding::DecodeFixed64(value.data()));
    batch.Delete(key);
  }
  for (const char* state : {"sealed/", "gc/"}) {
    for (const auto& [key, value] : volume->CatalogScan(prefix + state)) {
      batch.Delete(key);
    }
  }
  io::AlignedBuffer segment(kSegment);
  for (const log::LogKind kind :
       {log::LogKind::kSmall, log::LogKind::kLarge, log::LogKind::kMedium}) {
    std::unique_ptr<LogMirror> mirror;
    KVS_RETURN_IF_ERROR(LogMirror::Open(volume, region_id, kind, &mirror));
    const std::string map_prefix = LogMapPrefix(region_id, kind);
    for (const auto& [key, value] : volume->CatalogScan(map_prefix)) {
      batch.Delete(key);
    }
    // Medium copies stay as they are: the levels name them.
    if (kind == log::LogKind::kMedium) continue;
    std::map<uint64_t, Position> chain;
    for (const auto& [primary, copy] : mirror->segments()) {
      Position& position = chain[copy.chain_index];
      if (position.backup_segment) {
        return Status::Corruption("two copies of chain position " +
                                  std::to_string(copy.chain_index) +
                                  " of the " + log::LogKindName(kind) + " log");
      }
      KVS_RETURN_IF_ERROR(file->Read(alloc::SegmentStart(copy.backup_segment),
                                     kSegment, segment.data()));
      position.primary_segment = primary;
      position.backup_segment = copy.backup_segment;
      position.bytes.assign(segment.data(), copy.bytes);
      position.walk = WalkRecords(position.bytes);
    }
    for (const LandedLog& buffer : landed) {
      if (buffer.kind != kind) continue;
      const Walk walk = WalkRecords(buffer.bytes);
      if (!walk.header_valid || walk.header.kind != kind) continue;
      Position& position = chain[walk.header.chain_index];
      const bool better = position.bytes.empty() ||
                          walk.end > position.walk.end ||
                          (position.walk.header_valid &&
                           position.walk.header.nonce != walk.header.nonce);
      if (!better) continue;
      position.bytes.assign(buffer.bytes.substr(0, walk.end));
      position.walk = walk;
      position.from_buffer = true;
    }
    bool tail_seen = false;
    for (auto& [chain_index, position] : chain) {
      if (tail_seen || !position.walk.header_valid ||
          position.walk.header.chain_index != chain_index) {
        // Past the tail: never acknowledged. A copy without a valid header
        // holds nothing either.
        if (position.backup_segment) {
          batch.Free(*position.backup_segment);
          ++report->dropped_segments;
        }
        continue;
      }
      const bool tail = !position.walk.ended;
      tail_seen = tail;
      if (!position.backup_segment) {
        uint64_t fresh = 0;
        const Status reserve = volume->Reserve(&fresh);
        if (!reserve.ok()) {
          give_back();
          return reserve;
        }
        reserved.push_back(fresh);
        batch.Allocate(fresh);
        position.backup_segment = fresh;
      }
      log::SegmentHeader header = position.walk.header;
      header.region_id = region_id;
      const uint64_t start = alloc::SegmentStart(*position.backup_segment);
      Status written;
      if (tail || position.from_buffer) {
        std::memset(segment.data(), 0, kSegment);
        std::memcpy(segment.data(), position.bytes.data(), position.walk.end);
        log::EncodeSegmentHeader(header, segment.data());
        written =
            file->Write(start, std::string_view(segment.data(), kSegment));
      } else {
        std::memcpy(segment.data(), position.bytes.data(), kBlock);
        log::EncodeSegmentHeader(header, segment.data());
        written = file->Write(start, std::string_view(segment.data(), kBlock));
      }
      if (!written.ok()) {
        give_back();
        return written;
      }
      batch.Put(lsm::Region::LogCatalogPrefix(region_id, kind) +
                    coding::Hex16(chain_index),
                coding::Fixed64String(*position.backup_segment));
      if (kind == log::LogKind::kLarge && !tail) {
        std::string totals(16, '\0');
        coding::EncodeFixed64(totals.data(), position.walk.put_bytes);
        coding::EncodeFixed64(totals.data() + 8, position.walk.max_lsn);
        batch.Put(prefix + "sealed/" + coding::Hex16(*position.backup_segment),
                  totals);
      }
      ++report->segments;
      if (position.from_buffer) ++report->landed_segments;
    }
  }
  batch.Delete(ReplicaMarkerKey(region_id));
  // The replica's bookkeeping goes.
  for (const auto& [key, value] :
       volume->CatalogScan(prefix + "replica-level/")) {
    batch.Delete(key);
  }
  Status status = file->Sync();
  if (status.ok()) status = volume->Commit(batch);
  if (!status.ok()) give_back();
  return status;
}

}  // namespace kvs::replication
