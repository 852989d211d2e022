// Region::ReportState: a region's state as a backup catching up needs it.

#include <algorithm>
#include <set>

#include "alloc/device_offset.h"
#include "io/aligned_buffer.h"
#include "lsm/region.h"
#include "util/limits.h"

namespace kvs::lsm {
namespace {

constexpr uint64_t kSegment = limits::segment_size_bytes;

// Where the last non-zero byte of `bytes` ends, rounded up to a block.
size_t DataEnd(std::string_view bytes) {
  size_t end = bytes.size();
  while (end > 0 && bytes[end - 1] == '\0') --end;
  return std::min(bytes.size(), io::AlignedBuffer::RoundUp(end));
}

}  // namespace

Status Region::ReportState(const StateVisitor& visitor,
                           const std::function<void()>& then,
                           std::vector<uint64_t>* pinned) {
  // No compaction (nor the GC that follows one) runs or starts while
  // stall_mutex_ is held with compacting_ and draining_job_ false; no writer
  // appends while l0_mutex_ is held exclusively; nothing else appends to the
  // logs.
  std::unique_lock<std::mutex> stall_lock(stall_mutex_);
  ++quiesce_waiters_;  // a running job does not go on with a queued L0
  l0_drained_.wait(stall_lock,
                   [this] { return !compacting_ && !draining_job_; });
  --quiesce_waiters_;
  const Status status = ReportStateLocked(visitor, then, pinned);
  ResumeAfterQuiesceLocked();
  return status;
}

Status Region::ReportStateLocked(const StateVisitor& visitor,
                                 const std::function<void()>& then,
                                 std::vector<uint64_t>* pinned) {
  std::unique_lock<std::shared_mutex> lock(l0_mutex_);
  if (visitor.compacted) visitor.compacted(compacted_lsn_);
  std::vector<uint64_t> segments;
  const std::pair<log::LogWriter*, log::LogKind> logs[] = {
      {small_log_.get(), log::LogKind::kSmall},
      {large_log_.get(), log::LogKind::kLarge}};
  for (const auto& [writer, kind] : logs) {
    KVS_RETURN_IF_ERROR(writer->Write());  // every appended byte on the device
    const uint64_t position = writer->appended_position();
    const std::map<uint64_t, uint64_t> chain = writer->segments();
    for (const auto& [chain_index, segment] : chain) {
      const bool current = chain_index == chain.rbegin()->first;
      const uint64_t bytes =
          current ? alloc::OffsetInSegment(position) : kSegment;
      if (bytes < log::kSegmentHeaderBytes) {
        // Every segment holds its header: a backup sent less would hold no
        // copy of it, and refuse every level pointing into it.
        return Status::Internal(
            "region " + name_ + ": its " + log::LogKindName(kind) +
            " log's segment " + std::to_string(segment) + " (chain index " +
            std::to_string(chain_index) + ") would be reported with " +
            std::to_string(bytes) + " bytes");
      }
      visitor.log_segment(kind, chain_index, segment, bytes);
      segments.push_back(segment);
    }
  }
  std::set<uint64_t> medium_reported;
  uint64_t medium_chain = 0;
  for (const auto& [level, held] : NumberedLevelsLocked()) {
    const LevelDescriptor& descriptor = held->descriptor();
    for (const uint64_t segment : descriptor.medium_segments) {
      if (!medium_reported.insert(segment).second) continue;
      visitor.log_segment(log::LogKind::kMedium, medium_chain++, segment,
                          kSegment);
      segments.push_back(segment);
    }
    for (const uint64_t segment : descriptor.index_segments) {
      visitor.index_segment(segment);
      segments.push_back(segment);
    }
    visitor.level(level, descriptor, compacted_lsn_);
  }
  context_.volume->Pin(segments);
  *pinned = std::move(segments);
  then();
  return Status::Ok();
}

Status Region::ReadSegment(alloc::Volume* volume, uint64_t segment, size_t from,
                           size_t bytes, bool trim_zeros, std::string* out) {
  if (bytes > kSegment || from > bytes ||
      from % limits::io_alignment_bytes != 0) {
    return Status::InvalidArgument("a read past a segment's end");
  }
  io::AlignedBuffer buffer(io::AlignedBuffer::RoundUp(bytes - from));
  if (buffer.size() > 0) {
    KVS_RETURN_IF_ERROR(volume->file()->Read(
        alloc::SegmentStart(segment) + from, buffer.size(), buffer.data()));
  }
  const std::string_view read = buffer.view(bytes - from);
  out->assign(trim_zeros ? read.substr(0, DataEnd(read)) : read);
  return Status::Ok();
}

}  // namespace kvs::lsm
