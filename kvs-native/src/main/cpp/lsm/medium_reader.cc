#include "lsm/medium_reader.h"

#include <algorithm>

#include "alloc/device_offset.h"
#include "log/log_format.h"
#include "util/limits.h"

namespace kvs::lsm {

Status MediumReader::Load(uint64_t segment, Window* window, uint64_t offset) {
  const uint64_t start = offset & ~(limits::io_alignment_bytes - 1);
  const size_t length = static_cast<size_t>(
      std::min<uint64_t>(kWindowBytes, limits::segment_size_bytes - start));
  if (window->buffer.size() < kWindowBytes) {
    window->buffer.Resize(kWindowBytes);
  }
  KVS_RETURN_IF_ERROR(file_->Read(alloc::SegmentStart(segment) + start, length,
                                  window->buffer.data()));
  bytes_read_ += length;
  window->start = start;
  window->length = length;
  return Status::Ok();
}

Status MediumReader::ReadValue(uint64_t device_offset, uint32_t size,
                               std::string_view key, std::string* value) {
  const uint64_t segment = alloc::SegmentOf(device_offset);
  const uint64_t offset = alloc::OffsetInSegment(device_offset);
  if (size < log::kRecordHeaderBytes || size > kWindowBytes ||
      offset < log::kSegmentHeaderBytes ||
      offset + size > limits::segment_size_bytes) {
    return Status::Corruption("medium value pointer " +
                              std::to_string(device_offset) + " is invalid");
  }
  auto [it, inserted] = windows_.try_emplace(segment);
  Window& window = it->second;
  if (inserted) {
    // The header (first 4 KiB) carries the nonce records are sealed with.
    KVS_RETURN_IF_ERROR(Load(segment, &window, 0));
    log::SegmentHeader header;
    const Status status =
        log::DecodeSegmentHeader(window.buffer.view(), &header);
    if (!status.ok()) {
      return Status::Corruption("medium log segment " +
                                std::to_string(segment) + ": " +
                                std::string(status.message()));
    }
    window.nonce = header.nonce;
  }
  if (offset < window.start || offset + size > window.start + window.length) {
    KVS_RETURN_IF_ERROR(Load(segment, &window, offset));
  }
  log::Record record;
  size_t decoded = 0;
  const std::string_view bytes(window.buffer.data() + (offset - window.start),
                               size);
  if (!log::DecodeRecord(bytes, window.nonce, &record, &decoded) ||
      decoded != size || record.key != key) {
    return Status::Corruption("medium record at " +
                              std::to_string(device_offset) +
                              " fails its checksum or belongs to another key");
  }
  value->assign(record.value);
  return Status::Ok();
}

}  // namespace kvs::lsm
