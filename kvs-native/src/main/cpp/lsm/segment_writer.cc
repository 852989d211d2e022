#include "lsm/segment_writer.h"

#include <cstring>

#include "alloc/device_offset.h"
#include "util/check.h"
#include "util/limits.h"

namespace kvs::lsm {

SegmentWriter::~SegmentWriter() {
  if (!finished_) {
    Abandon();
  }
}

Status SegmentWriter::Allocate(size_t size, uint64_t* device_offset) {
  KVS_CHECK(size % limits::io_alignment_bytes == 0 &&
            size <= limits::segment_size_bytes);
  if (!has_current_ ||
      open_[current_].used + size > limits::segment_size_bytes) {
    if (has_current_ && open_[current_].unwritten == 0) {
      KVS_RETURN_IF_ERROR(FlushSegment(current_, open_[current_]));
      open_.erase(current_);
    }
    uint64_t segment = 0;
    KVS_RETURN_IF_ERROR(volume_->Reserve(&segment));
    segments_.push_back(segment);
    open_[segment].buffer.Resize(limits::segment_size_bytes);
    current_ = segment;
    has_current_ = true;
  }
  Pending& pending = open_[current_];
  *device_offset = alloc::DeviceOffset(current_, pending.used);
  pending.used += size;
  pending.unwritten++;
  return Status::Ok();
}

Status SegmentWriter::Write(uint64_t device_offset, std::string_view node) {
  const uint64_t segment = alloc::SegmentOf(device_offset);
  const auto it = open_.find(segment);
  KVS_CHECK_MSG(it != open_.end() && it->second.unwritten > 0,
                "node written to a segment with no pending allocation");
  Pending& pending = it->second;
  const uint64_t offset = alloc::OffsetInSegment(device_offset);
  KVS_CHECK(offset + node.size() <= pending.used);
  std::memcpy(pending.buffer.data() + offset, node.data(), node.size());
  pending.unwritten--;
  if (pending.unwritten == 0 && segment != current_) {
    KVS_RETURN_IF_ERROR(FlushSegment(segment, pending));
    open_.erase(it);
  }
  return Status::Ok();
}

Status SegmentWriter::FlushSegment(uint64_t segment, Pending& pending) {
  // The whole segment, zeros after the nodes included: a segment reused
  // holds stale bytes, and a replication catch-up reads an index segment
  // back whole (Region::ReportState), trusting zeros to follow its data.
  const size_t length = limits::segment_size_bytes;
  KVS_RETURN_IF_ERROR(volume_->file()->Write(alloc::SegmentStart(segment),
                                             pending.buffer.view(length)));
  bytes_written_ += length;
  if (hook_) {
    KVS_RETURN_IF_ERROR(hook_(segment, pending.buffer.view(pending.used)));
  }
  return Status::Ok();
}

Status SegmentWriter::Finish() {
  for (auto& [segment, pending] : open_) {
    KVS_CHECK_MSG(pending.unwritten == 0, "finishing with unwritten nodes");
    KVS_RETURN_IF_ERROR(FlushSegment(segment, pending));
  }
  open_.clear();
  finished_ = true;
  return Status::Ok();
}

void SegmentWriter::Abandon() {
  for (uint64_t segment : segments_) {
    volume_->Unreserve(segment);
  }
  segments_.clear();
  open_.clear();
  finished_ = true;
}

Status WriteBlob(SegmentWriter* writer, std::string_view bytes,
                 std::vector<uint64_t>* chunks) {
  std::string piece;
  for (size_t start = 0; start < bytes.size();
       start += limits::segment_size_bytes) {
    const size_t length =
        std::min<size_t>(limits::segment_size_bytes, bytes.size() - start);
    const size_t padded = io::AlignedBuffer::RoundUp(length);
    uint64_t offset = 0;
    KVS_RETURN_IF_ERROR(writer->Allocate(padded, &offset));
    piece.assign(bytes.data() + start, length);
    piece.resize(padded, '\0');
    KVS_RETURN_IF_ERROR(writer->Write(offset, piece));
    chunks->push_back(offset);
  }
  return Status::Ok();
}

}  // namespace kvs::lsm
