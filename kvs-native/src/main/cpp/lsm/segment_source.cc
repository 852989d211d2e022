#include "lsm/segment_source.h"

#include "alloc/device_offset.h"
#include "util/limits.h"

namespace kvs::lsm {

Status SegmentSource::Read(uint64_t device_offset, size_t size,
                           std::string* node) {
  const uint64_t segment = alloc::SegmentOf(device_offset);
  const uint64_t offset = alloc::OffsetInSegment(device_offset);
  if (offset + size > limits::segment_size_bytes) {
    return Status::Corruption("node at " + std::to_string(device_offset) +
                              " crosses its segment");
  }
  auto it = loaded_.begin();
  while (it != loaded_.end() && it->segment != segment) {
    ++it;
  }
  if (it == loaded_.end()) {
    Loaded fresh{segment, {}};
    if (loaded_.size() == kSegmentsKept) {
      fresh.bytes = std::move(loaded_.back().bytes);  // reuse the buffer
      loaded_.pop_back();
    } else {
      fresh.bytes.Resize(limits::segment_size_bytes);
    }
    KVS_RETURN_IF_ERROR(file_->Read(alloc::SegmentStart(segment),
                                    fresh.bytes.size(), fresh.bytes.data()));
    bytes_read_ += fresh.bytes.size();
    loaded_.push_front(std::move(fresh));
  } else if (it != loaded_.begin()) {
    loaded_.splice(loaded_.begin(), loaded_, it);
  }
  node->assign(loaded_.front().bytes.data() + offset, size);
  return Status::Ok();
}

}  // namespace kvs::lsm
