#include "replication/log_mirror.h"

#include <cstring>

#include "alloc/device_offset.h"
#include "alloc/metadata_batch.h"
#include "io/aligned_buffer.h"
#include "lsm/region.h"
#include "replication/replica_chain.h"
#include "util/coding.h"
#include "util/limits.h"

namespace kvs::replication {
namespace {

constexpr size_t kEntryBytes = 8 + 8 + 4 + 1;
constexpr size_t kWalkedEntryBytes = kEntryBytes + 4 + 1 + 8 + 8;

std::string EncodeEntry(const MirroredSegment& entry) {
  std::string out;
  coding::PutFixed64(&out, entry.backup_segment);
  coding::PutFixed64(&out, entry.chain_index);
  coding::PutFixed32(&out, entry.bytes);
  out.push_back(entry.sealed ? 1 : 0);
  if (entry.walk.has_value()) {
    coding::PutFixed32(&out, entry.walk->end);
    out.push_back(entry.walk->ended ? 1 : 0);
    coding::PutFixed64(&out, entry.walk->put_bytes);
    coding::PutFixed64(&out, entry.walk->max_lsn);
  }
  return out;
}

}  // namespace

bool DecodeLogMapEntry(std::string_view in, MirroredSegment* entry) {
  if ((in.size() != kEntryBytes && in.size() != kWalkedEntryBytes) ||
      static_cast<uint8_t>(in[20]) > 1) {
    return false;
  }
  entry->backup_segment = coding::DecodeFixed64(in.data());
  entry->chain_index = coding::DecodeFixed64(in.data() + 8);
  entry->bytes = coding::DecodeFixed32(in.data() + 16);
  entry->sealed = in[20] == 1;
  entry->walk.reset();
  if (in.size() == kWalkedEntryBytes) {
    CopyWalk walk;
    walk.end = coding::DecodeFixed32(in.data() + 21);
    if (static_cast<uint8_t>(in[25]) > 1 || walk.end > entry->bytes) {
      return false;
    }
    walk.ended = in[25] == 1;
    walk.put_bytes = coding::DecodeFixed64(in.data() + 26);
    walk.max_lsn = coding::DecodeFixed64(in.data() + 34);
    entry->walk = walk;
  }
  return entry->bytes <= limits::segment_size_bytes;
}

std::string LogMapPrefix(uint64_t region_id, log::LogKind kind) {
  return lsm::Region::CatalogPrefix(region_id) + "logmap/" +
         log::LogKindName(kind) + "/";
}

LogMirror::LogMirror(alloc::Volume* volume, std::string prefix)
    : volume_(volume), prefix_(std::move(prefix)) {}

std::string LogMirror::Key(uint64_t primary_segment) const {
  return prefix_ + coding::Hex16(primary_segment);
}

Status LogMirror::Open(alloc::Volume* volume, uint64_t region_id,
                       log::LogKind kind, std::unique_ptr<LogMirror>* mirror) {
  std::unique_ptr<LogMirror> opened(
      new LogMirror(volume, LogMapPrefix(region_id, kind)));
  for (const auto& [key, value] : volume->CatalogScan(opened->prefix_)) {
    const std::string digits = key.substr(opened->prefix_.size());
    MirroredSegment entry;
    char* end = nullptr;
    const uint64_t primary = std::strtoull(digits.c_str(), &end, 16);
    if (digits.size() != 16 || end != digits.c_str() + 16 ||
        !DecodeLogMapEntry(value, &entry) ||
        !volume->IsAllocated(entry.backup_segment)) {
      return Status::Corruption("log map entry " + key + " is damaged");
    }
    opened->segments_[primary] = entry;
  }
  *mirror = std::move(opened);
  return Status::Ok();
}

Status LogMirror::Persist(uint64_t primary_segment, uint64_t chain_index,
                          std::string_view bytes, bool sealed) {
  if (bytes.size() > limits::segment_size_bytes) {
    return Status::InvalidArgument("a log segment copy of " +
                                   std::to_string(bytes.size()) +
                                   " bytes is larger than a segment");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const auto existing = segments_.find(primary_segment);
  if (existing != segments_.end() &&
      (existing->second.bytes > bytes.size() ||
       existing->second.chain_index != chain_index)) {
    return Status::InvalidArgument(
        "segment " + std::to_string(primary_segment) +
        " already has a copy that this one would not extend");
  }
  // A longer copy extends the earlier one in place (index segments
  // shipped meanwhile may point into it already): only the blocks from the
  // one the earlier copy ended in are written, the bytes before them stay.
  const bool extend = existing != segments_.end();
  const size_t from = extend ? existing->second.bytes /
                                   limits::io_alignment_bytes *
                                   limits::io_alignment_bytes
                             : 0;
  const size_t to = (bytes.size() + limits::io_alignment_bytes - 1) /
                    limits::io_alignment_bytes * limits::io_alignment_bytes;
  io::AlignedBuffer blocks(to - from);  // zeroed
  if (bytes.size() > from) {
    std::memcpy(blocks.data(), bytes.data() + from, bytes.size() - from);
  }
  uint64_t segment = 0;
  if (extend) {
    segment = existing->second.backup_segment;
  } else {
    KVS_RETURN_IF_ERROR(volume_->Reserve(&segment));
  }
  Status status = to == from ? Status::Ok()
                             : volume_->file()->Write(
                                   alloc::DeviceOffset(segment, from),
                                   std::string_view(blocks.data(), to - from));
  if (status.ok()) status = volume_->file()->Sync();
  MirroredSegment entry{
      segment, chain_index, static_cast<uint32_t>(bytes.size()), sealed, {}};
  if (sealed) {
    // Walked now, from memory, so a promotion need not read it back.
    const SegmentWalk walk = WalkSegment(bytes);
    entry.walk = CopyWalk{static_cast<uint32_t>(walk.end), walk.ended,
                          walk.put_bytes, walk.max_lsn};
  }
  if (status.ok()) {
    // The copy is durable: now the map may name it (or its new length).
    alloc::MetadataBatch batch;
    if (!extend) batch.Allocate(segment);
    batch.Put(Key(primary_segment), EncodeEntry(entry));
    status = volume_->Commit(batch);
  }
  if (!status.ok()) {
    if (!extend) volume_->Unreserve(segment);
    return status;
  }
  segments_[primary_segment] = entry;
  return Status::Ok();
}

Status LogMirror::Translate(uint64_t primary_offset,
                            uint64_t* backup_offset) const {
  const uint64_t primary = alloc::SegmentOf(primary_offset);
  const uint64_t within = alloc::OffsetInSegment(primary_offset);
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = segments_.find(primary);
  if (it == segments_.end()) {
    return Status::NotFound("no copy of the primary's log segment " +
                            std::to_string(primary));
  }
  if (within >= it->second.bytes) {
    return Status::InvalidArgument(
        "offset " + std::to_string(within) + " is past the " +
        std::to_string(it->second.bytes) + " bytes copied of segment " +
        std::to_string(primary));
  }
  *backup_offset = alloc::DeviceOffset(it->second.backup_segment, within);
  return Status::Ok();
}

Status LogMirror::Trim(const std::vector<uint64_t>& primary_segments) {
  std::vector<FreedSegment> any;
  for (const uint64_t primary : primary_segments) any.push_back({primary, 0});
  return TrimMatching(any, /*match_chain=*/false);
}

Status LogMirror::TrimFreed(const std::vector<FreedSegment>& freed) {
  return TrimMatching(freed, /*match_chain=*/true);
}

Status LogMirror::TrimMatching(const std::vector<FreedSegment>& freed,
                               bool match_chain) {
  std::lock_guard<std::mutex> lock(mutex_);
  alloc::MetadataBatch batch;
  std::vector<uint64_t> trimmed;
  for (const FreedSegment& segment : freed) {
    const auto it = segments_.find(segment.primary_segment);
    if (it == segments_.end() ||
        (match_chain && it->second.chain_index != segment.chain_index)) {
      continue;
    }
    batch.Free(it->second.backup_segment);
    batch.Delete(Key(segment.primary_segment));
    trimmed.push_back(segment.primary_segment);
  }
  if (trimmed.empty()) return Status::Ok();
  KVS_RETURN_IF_ERROR(volume_->Commit(batch));
  for (const uint64_t primary : trimmed) segments_.erase(primary);
  return Status::Ok();
}

Status LogMirror::Clear() {
  std::vector<uint64_t> all;
  for (const auto& [primary, copy] : segments()) all.push_back(primary);
  return Trim(all);
}

std::map<uint64_t, MirroredSegment> LogMirror::segments() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return segments_;
}

}  // namespace kvs::replication
