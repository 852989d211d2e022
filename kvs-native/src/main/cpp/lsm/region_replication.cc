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

// Reads the first `bytes` bytes of `segment` into `buffer`.
Status ReadSegment(io::File* file, uint64_t segment, size_t bytes,
                   io::AlignedBuffer* buffer) {
  const size_t aligned = io::AlignedBuffer::RoundUp(bytes);
  if (aligned == 0) return Status::Ok();
  return file->Read(alloc::SegmentStart(segment), aligned, buffer->data());
}

// Where the last non-zero byte of `bytes` ends, rounded up to a block.
size_t DataEnd(std::string_view bytes) {
  size_t end = bytes.size();
  while (end > 0 && bytes[end - 1] == '\0') --end;
  return std::min(bytes.size(), io::AlignedBuffer::RoundUp(end));
}

}  // namespace

Status Region::ReportState(const StateVisitor& visitor,
                           const std::function<void()>& then) {
  // No compaction (nor the GC that follows one) runs or starts while
  // stall_mutex_ is held with compacting_ false; no writer appends while
  // l0_mutex_ is held exclusively; nothing else appends to the logs.
  std::unique_lock<std::mutex> stall_lock(stall_mutex_);
  l0_drained_.wait(stall_lock, [this] { return !compacting_; });
  std::unique_lock<std::shared_mutex> lock(l0_mutex_);
  io::File* file = context_.volume->file();
  io::AlignedBuffer buffer(kSegment);
  const std::pair<log::LogWriter*, log::LogKind> logs[] = {
      {small_log_.get(), log::LogKind::kSmall},
      {large_log_.get(), log::LogKind::kLarge}};
  for (const auto& [writer, kind] : logs) {
    KVS_RETURN_IF_ERROR(writer->Write());  // every appended byte on the device
    const uint64_t position = writer->appended_position();
    const std::map<uint64_t, uint64_t> segments = writer->segments();
    for (const auto& [chain_index, segment] : segments) {
      const bool current = chain_index == segments.rbegin()->first;
      const size_t bytes =
          current ? alloc::OffsetInSegment(position) : kSegment;
      KVS_RETURN_IF_ERROR(ReadSegment(file, segment, bytes, &buffer));
      visitor.log_bytes(kind, {chain_index, segment, 0, buffer.view(bytes)});
    }
  }
  std::set<uint64_t> medium_reported;
  uint64_t medium_chain = 0;
  for (size_t level = 0; level < levels_.size(); ++level) {
    if (levels_[level] == nullptr) continue;
    const LevelDescriptor& descriptor = levels_[level]->descriptor();
    for (const uint64_t segment : descriptor.medium_segments) {
      if (!medium_reported.insert(segment).second) continue;
      KVS_RETURN_IF_ERROR(ReadSegment(file, segment, kSegment, &buffer));
      visitor.log_bytes(log::LogKind::kMedium,
                        {medium_chain++, segment, 0, buffer.view(kSegment)});
    }
    // Index segments are written whole (SegmentWriter), so zeros follow
    // their nodes and filter bytes.
    for (const uint64_t segment : descriptor.index_segments) {
      KVS_RETURN_IF_ERROR(ReadSegment(file, segment, kSegment, &buffer));
      const std::string_view bytes = buffer.view(kSegment);
      visitor.index_segment(segment, bytes.substr(0, DataEnd(bytes)));
    }
    visitor.level(level, descriptor, compacted_lsn_);
  }
  then();
  return Status::Ok();
}

}  // namespace kvs::lsm
