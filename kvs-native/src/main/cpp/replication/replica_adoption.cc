#include "replication/replica_adoption.h"

#include <cstring>
#include <map>

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
                    const lsm::KeyBounds& bounds, AdoptionReport* report) {
  *report = {};
  io::File* file = volume->file();
  alloc::MetadataBatch batch;
  std::vector<uint64_t> reserved;
  const auto give_back = [&] {
    for (const uint64_t segment : reserved) volume->Unreserve(segment);
  };
  const std::string prefix = lsm::Region::CatalogPrefix(region_id);
  // A replica split from another's (Engine::SplitRegion) shares copies with
  // its sibling: a shared copy's header names the first ancestor, which
  // every region sharing it descends from (and so accepts), and a shared
  // tail, which the log goes on writing, and a shared small copy (a
  // recovery's cut may write into it) move to segments of their own.
  lsm::RegionOrigin origin;
  const std::optional<std::string> held_origin =
      volume->CatalogGet(lsm::Region::OriginCatalogKey(region_id));
  if (held_origin.has_value()) {
    KVS_RETURN_IF_ERROR(lsm::RegionOrigin::Decode(*held_origin, &origin));
  }
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
    std::map<uint64_t, ChainPosition> chain;
    KVS_RETURN_IF_ERROR(
        PlanReplicaChain(file, kind, mirror->segments(), landed, &chain));
    // The last kept position is the log's current segment once the region
    // opens (also when it ended: the log moves on at its next append).
    uint64_t last_kept = 0;
    for (const auto& [chain_index, position] : chain) {
      if (position.kept) last_kept = chain_index;
    }
    std::string bytes;
    for (const auto& [chain_index, position] : chain) {
      if (!position.kept) {
        if (position.copy) {
          batch.Free(position.copy->backup_segment);
          ++report->dropped_segments;
        }
        continue;
      }
      const bool from_buffer = position.buffer.has_value();
      const bool shared = position.copy &&
                          volume->References(position.copy->backup_segment) > 1;
      // A shared small copy is the parent's write-ahead log, which a
      // recovery may cut and append to: it gets a segment of its own too.
      const bool whole = position.tail || from_buffer ||
                         (shared && kind == log::LogKind::kSmall);
      uint64_t backup_segment = 0;
      if (position.copy && !(shared && whole)) {
        backup_segment = position.copy->backup_segment;
      } else {
        if (position.copy) batch.Free(position.copy->backup_segment);
        const Status reserve = volume->Reserve(&backup_segment);
        if (!reserve.ok()) {
          give_back();
          return reserve;
        }
        reserved.push_back(backup_segment);
        batch.Allocate(backup_segment);
      }
      log::SegmentHeader header = position.walk.header;
      header.region_id = shared && !whole && !origin.ancestors.empty()
                             ? origin.ancestors.front()
                             : region_id;
      const uint64_t start = alloc::SegmentStart(backup_segment);
      Status written;
      if (whole) {
        written = ReadChainPosition(file, position, landed, &bytes);
        if (written.ok()) {
          std::memset(segment.data(), 0, kSegment);
          std::memcpy(segment.data(), bytes.data(), position.walk.end);
          log::EncodeSegmentHeader(header, segment.data());
          written =
              file->Write(start, std::string_view(segment.data(), kSegment));
        }
      } else {
        std::memset(segment.data(), 0, kBlock);
        log::EncodeSegmentHeader(header, segment.data());
        written = file->Write(start, std::string_view(segment.data(), kBlock));
      }
      if (!written.ok()) {
        give_back();
        return written;
      }
      batch.Put(lsm::Region::LogCatalogPrefix(region_id, kind) +
                    coding::Hex16(chain_index),
                coding::Fixed64String(backup_segment));
      if (kind == log::LogKind::kLarge && !position.tail &&
          chain_index != last_kept) {
        // Sealed: GC may free it once its records are garbage (never the
        // current segment, which the log seals itself when it rolls).
        std::string totals(16, '\0');
        coding::EncodeFixed64(totals.data(), position.walk.put_bytes);
        coding::EncodeFixed64(totals.data() + 8, position.walk.max_lsn);
        batch.Put(prefix + "sealed/" + coding::Hex16(backup_segment), totals);
      }
      ++report->segments;
      if (from_buffer) ++report->landed_segments;
    }
  }
  batch.Delete(ReplicaMarkerKey(region_id));
  // A split region's replica holds its sibling's keys too (the levels the
  // primary shipped are its parent's): the region keeps to its bounds, and
  // to its ancestors (segments shared with its sibling name the first).
  if (!bounds.unbounded() || !origin.ancestors.empty()) {
    batch.Put(lsm::Region::OriginCatalogKey(region_id),
              lsm::RegionOrigin{bounds.unbounded() ? origin.bounds : bounds,
                                origin.ancestors}
                  .Encode());
  }
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
