#include "lsm/record_reader.h"

#include <algorithm>
#include <vector>

#include "alloc/device_offset.h"
#include "io/aligned_buffer.h"
#include "log/log_format.h"
#include "util/limits.h"

namespace kvs::lsm {

Status RecordReader::Nonce(uint64_t segment, uint64_t* nonce) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = nonces_.find(segment);
    if (it != nonces_.end()) {
      *nonce = it->second;
      return Status::Ok();
    }
  }
  io::AlignedBuffer block(log::kSegmentHeaderBytes);
  KVS_RETURN_IF_ERROR(
      file_->Read(alloc::SegmentStart(segment), block.size(), block.data()));
  log::SegmentHeader header;
  const Status status = log::DecodeSegmentHeader(block.view(), &header);
  if (!status.ok()) {
    return Status::Corruption("value log segment " + std::to_string(segment) +
                              ": " + std::string(status.message()));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  nonces_[segment] = header.nonce;
  *nonce = header.nonce;
  return Status::Ok();
}

void RecordReader::Forget(uint64_t segment) {
  if (cache_ != nullptr) cache_->EraseSegment(segment);
  std::lock_guard<std::mutex> lock(mutex_);
  nonces_.erase(segment);
}

Status RecordReader::CheckPointer(uint64_t device_offset, uint32_t size) {
  const uint64_t offset = alloc::OffsetInSegment(device_offset);
  if (size < log::kRecordHeaderBytes || offset < log::kSegmentHeaderBytes ||
      offset + size > limits::segment_size_bytes) {
    return Status::Corruption("value pointer " + std::to_string(device_offset) +
                              " is invalid");
  }
  return Status::Ok();
}

Status RecordReader::DecodeValue(std::string_view bytes, uint64_t nonce,
                                 uint64_t device_offset, std::string_view key,
                                 std::string* value) {
  log::Record record;
  size_t decoded_size = 0;
  if (!log::DecodeRecord(bytes, nonce, &record, &decoded_size) ||
      decoded_size != bytes.size() || record.key != key) {
    return Status::Corruption("value record at " +
                              std::to_string(device_offset) +
                              " fails its checksum or belongs to another key");
  }
  value->assign(record.value);
  return Status::Ok();
}

std::pair<uint64_t, uint64_t> RecordReader::BlocksOf(uint64_t device_offset,
                                                     uint32_t size) const {
  const uint64_t alignment = file_->read_alignment_bytes();
  return {device_offset & ~(alignment - 1),
          (device_offset + size + alignment - 1) & ~(alignment - 1)};
}

Status RecordReader::ReadValue(uint64_t device_offset, uint32_t size,
                               std::string_view key, std::string* value) {
  KVS_RETURN_IF_ERROR(CheckPointer(device_offset, size));
  if (cache_ != nullptr && cache_->Get(device_offset, size, key, value)) {
    return Status::Ok();
  }
  uint64_t nonce = 0;
  KVS_RETURN_IF_ERROR(Nonce(alloc::SegmentOf(device_offset), &nonce));
  const auto [from, to] = BlocksOf(device_offset, size);
  io::AlignedBuffer buffer(to - from);
  KVS_RETURN_IF_ERROR(file_->Read(from, to - from, buffer.data()));
  KVS_RETURN_IF_ERROR(DecodeValue(
      std::string_view(buffer.data() + (device_offset - from), size), nonce,
      device_offset, key, value));
  if (cache_ != nullptr) cache_->Put(device_offset, size, key, *value);
  return Status::Ok();
}

Status RecordReader::ReadValues(std::span<const ValueRead> reads) {
  if (reads.size() == 1) {
    return ReadValue(reads[0].device_offset, reads[0].size, reads[0].key,
                     reads[0].value);
  }
  // The values cached need no device read; the rest are read together.
  std::vector<ValueRead> missed;
  missed.reserve(reads.size());
  for (const ValueRead& read : reads) {
    KVS_RETURN_IF_ERROR(CheckPointer(read.device_offset, read.size));
    if (cache_ == nullptr ||
        !cache_->Get(read.device_offset, read.size, read.key, read.value)) {
      missed.push_back(read);
    }
  }
  if (missed.empty()) return Status::Ok();
  reads = missed;
  // Records close to each other on the device are read together: one
  // request for the blocks from the first to the last, as long as the gap
  // between two is at most kCoalesceGapBytes and the request stays within
  // one segment and kCoalescedReadBytesMax. A medium log is written in key
  // order by compactions, so the medium values of a scan's neighbouring
  // keys sit next to each other; one request costs the device a latency,
  // a few more KiB in it almost nothing.
  std::vector<size_t> order(reads.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&reads](size_t a, size_t b) {
    return reads[a].device_offset < reads[b].device_offset;
  });
  std::vector<io::ReadOp> ops;
  std::vector<size_t> op_of(reads.size());
  for (const size_t index : order) {
    const ValueRead& read = reads[index];
    const auto [from, to] = BlocksOf(read.device_offset, read.size);
    if (!ops.empty()) {
      io::ReadOp& last = ops.back();
      const uint64_t last_end = last.offset + last.size;
      if (from <= last_end + kCoalesceGapBytes &&
          alloc::SegmentOf(from) == alloc::SegmentOf(last.offset) &&
          std::max(to, last_end) - last.offset <= kCoalescedReadBytesMax) {
        last.size = std::max(to, last_end) - last.offset;
        op_of[index] = ops.size() - 1;
        continue;
      }
    }
    io::ReadOp op;
    op.offset = from;
    op.size = to - from;
    ops.push_back(op);
    op_of[index] = ops.size() - 1;
  }
  // Every request gets its range in one buffer, each at a page boundary of
  // it, as direct reads want.
  uint64_t total = 0;
  for (const io::ReadOp& op : ops) total += io::AlignedBuffer::RoundUp(op.size);
  io::AlignedBuffer buffer(total);
  uint64_t at = 0;
  for (io::ReadOp& op : ops) {
    op.out = buffer.data() + at;
    at += io::AlignedBuffer::RoundUp(op.size);
  }
  KVS_RETURN_IF_ERROR(file_->ReadMany(ops));
  for (size_t i = 0; i < reads.size(); ++i) {
    const ValueRead& read = reads[i];
    const io::ReadOp& op = ops[op_of[i]];
    uint64_t nonce = 0;
    KVS_RETURN_IF_ERROR(Nonce(alloc::SegmentOf(read.device_offset), &nonce));
    KVS_RETURN_IF_ERROR(DecodeValue(
        std::string_view(op.out + (read.device_offset - op.offset), read.size),
        nonce, read.device_offset, read.key, read.value));
    if (cache_ != nullptr) {
      cache_->Put(read.device_offset, read.size, read.key, *read.value);
    }
  }
  return Status::Ok();
}

}  // namespace kvs::lsm
