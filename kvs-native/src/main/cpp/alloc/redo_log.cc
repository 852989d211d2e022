#include "alloc/redo_log.h"

#include <cstring>

#include "alloc/device_offset.h"
#include "io/aligned_buffer.h"
#include "util/check.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace kvs::alloc {
namespace {

constexpr char kSegmentMagic[8] = {'K', 'V', 'S', 'R', 'E', 'D', 'O', '1'};
constexpr size_t kSegmentHeaderCrcOffset = 40;
constexpr uint8_t kTypeBatch = 1;
constexpr uint8_t kTypeContinue = 2;
constexpr size_t kBlock = limits::io_alignment_bytes;

io::AlignedBuffer EncodeSegmentHeader(const VolumeId& volume_id,
                                      uint64_t generation,
                                      uint64_t chain_index) {
  io::AlignedBuffer block(kBlock);
  char* p = block.data();
  std::memcpy(p, kSegmentMagic, sizeof(kSegmentMagic));
  std::memcpy(p + 8, volume_id.data(), volume_id.size());
  coding::EncodeFixed64(p + 24, generation);
  coding::EncodeFixed64(p + 32, chain_index);
  coding::EncodeFixed32(
      p + kSegmentHeaderCrcOffset,
      crc32c::Mask(crc32c::Value(p, kSegmentHeaderCrcOffset)));
  return block;
}

bool SegmentHeaderMatches(const char* p, const VolumeId& volume_id,
                          uint64_t generation, uint64_t chain_index) {
  return std::memcmp(p, kSegmentMagic, sizeof(kSegmentMagic)) == 0 &&
         crc32c::Unmask(coding::DecodeFixed32(p + kSegmentHeaderCrcOffset)) ==
             crc32c::Value(p, kSegmentHeaderCrcOffset) &&
         std::memcmp(p + 8, volume_id.data(), volume_id.size()) == 0 &&
         coding::DecodeFixed64(p + 24) == generation &&
         coding::DecodeFixed64(p + 32) == chain_index;
}

size_t RecordBlocks(size_t payload_bytes) {
  return (kRedoRecordHeaderBytes + payload_bytes + kBlock - 1) / kBlock;
}

// A record parsed from a loaded segment, if it is intact.
struct ParsedRecord {
  uint64_t sequence;
  uint8_t type;
  std::string_view payload;
  size_t blocks;
};

bool ParseRecord(std::string_view segment, size_t offset, uint64_t generation,
                 ParsedRecord* record) {
  if (offset + kRedoRecordHeaderBytes > segment.size()) {
    return false;
  }
  const char* p = segment.data() + offset;
  const uint32_t length = coding::DecodeFixed32(p + 4);
  if (length > kRedoPayloadBytesMax ||
      offset + kRedoRecordHeaderBytes + length > segment.size() ||
      coding::DecodeFixed64(p + 8) != generation) {
    return false;
  }
  const uint32_t stored = crc32c::Unmask(coding::DecodeFixed32(p));
  if (crc32c::Value(p + 4, kRedoRecordHeaderBytes - 4 + length) != stored) {
    return false;
  }
  record->sequence = coding::DecodeFixed64(p + 16);
  record->type = static_cast<uint8_t>(p[24]);
  record->payload = std::string_view(p + kRedoRecordHeaderBytes, length);
  record->blocks = RecordBlocks(length);
  return true;
}

}  // namespace

Status RedoLogWriter::StartChain(uint64_t first_segment,
                                 uint64_t first_sequence) {
  const io::AlignedBuffer header =
      EncodeSegmentHeader(volume_id_, generation_, 0);
  KVS_RETURN_IF_ERROR(file_->Write(SegmentStart(first_segment), header.view()));
  position_ = {first_segment, kBlock, 0, first_sequence};
  return Status::Ok();
}

Status RedoLogWriter::WriteRecord(uint8_t type, std::string_view payload) {
  KVS_CHECK(payload.size() <= kRedoPayloadBytesMax);
  io::AlignedBuffer buffer(RecordBlocks(payload.size()) * kBlock);
  char* p = buffer.data();
  coding::EncodeFixed32(p + 4, static_cast<uint32_t>(payload.size()));
  coding::EncodeFixed64(p + 8, generation_);
  coding::EncodeFixed64(p + 16, position_.next_sequence);
  p[24] = static_cast<char>(type);
  std::memcpy(p + kRedoRecordHeaderBytes, payload.data(), payload.size());
  coding::EncodeFixed32(
      p, crc32c::Mask(crc32c::Value(
             p + 4, kRedoRecordHeaderBytes - 4 + payload.size())));
  KVS_CHECK(position_.offset_in_segment + buffer.size() <=
            limits::segment_size_bytes);
  KVS_RETURN_IF_ERROR(
      file_->Write(DeviceOffset(position_.segment, position_.offset_in_segment),
                   buffer.view()));
  position_.offset_in_segment += buffer.size();
  position_.next_sequence++;
  bytes_written_ += buffer.size();
  return Status::Ok();
}

Status RedoLogWriter::Append(const MetadataBatch& batch,
                             uint64_t* linked_segment) {
  const std::string payload = batch.Encode();
  if (payload.size() > kRedoPayloadBytesMax) {
    return Status::InvalidArgument("metadata batch of " +
                                   std::to_string(payload.size()) +
                                   " bytes exceeds one redo segment");
  }
  const uint64_t needed = RecordBlocks(payload.size()) * kBlock + kBlock;
  if (position_.offset_in_segment + needed > limits::segment_size_bytes) {
    uint64_t next = 0;
    KVS_RETURN_IF_ERROR(reserve_(&next));
    const io::AlignedBuffer header =
        EncodeSegmentHeader(volume_id_, generation_, position_.chain_index + 1);
    Status written = file_->Write(SegmentStart(next), header.view());
    char link[8];
    coding::EncodeFixed64(link, next);
    if (written.ok()) {
      written =
          WriteRecord(kTypeContinue, std::string_view(link, sizeof(link)));
    }
    if (!written.ok()) {
      // No continue record names it: the chain ends where it did.
      unreserve_(next);
      return written;
    }
    position_.segment = next;
    position_.offset_in_segment = kBlock;
    position_.chain_index++;
    *linked_segment = next;
  }
  KVS_RETURN_IF_ERROR(WriteRecord(kTypeBatch, payload));
  const Status synced = file_->Sync();
  if (!synced.ok()) {
    // Whatever the errno, the record's durability is unknown now: never a
    // NoSpace, which would let the caller write on after it.
    return Status::IoError(synced.message());
  }
  return Status::Ok();
}

Status ReplayRedoLog(io::File* file, const Superblock& superblock,
                     const std::function<Status(const MetadataBatch&)>& apply,
                     RedoReplay* replay) {
  io::AlignedBuffer buffer(limits::segment_size_bytes);
  uint64_t segment = superblock.redo_first_segment;
  uint64_t chain_index = 0;
  uint64_t sequence = superblock.redo_first_sequence;
  RedoReplay result;
  while (true) {
    KVS_RETURN_IF_ERROR(
        file->Read(SegmentStart(segment), buffer.size(), buffer.data()));
    if (!SegmentHeaderMatches(buffer.data(), superblock.volume_id,
                              superblock.generation, chain_index)) {
      return Status::Corruption("redo log segment " + std::to_string(segment) +
                                " (chain index " + std::to_string(chain_index) +
                                ") has a damaged or foreign header");
    }
    result.segments.push_back(segment);
    const std::string_view data = buffer.view();
    size_t offset = kBlock;
    bool continued = false;
    while (true) {
      ParsedRecord record{};
      if (!ParseRecord(data, offset, superblock.generation, &record) ||
          record.sequence != sequence) {
        // The tail, unless an intact later record shows damage mid-log.
        for (size_t later = offset + kBlock; later < data.size();
             later += kBlock) {
          ParsedRecord probe{};
          if (ParseRecord(data, later, superblock.generation, &probe) &&
              probe.sequence > sequence) {
            return Status::Corruption(
                "redo log damaged at segment " + std::to_string(segment) +
                " offset " + std::to_string(offset) +
                ": a later record (sequence " + std::to_string(probe.sequence) +
                ") is intact");
          }
        }
        result.end = {segment, offset, chain_index, sequence};
        *replay = std::move(result);
        return Status::Ok();
      }
      offset += record.blocks * kBlock;
      ++sequence;
      if (record.type == kTypeContinue) {
        if (record.payload.size() != 8) {
          return Status::Corruption("malformed redo continue record");
        }
        segment = coding::DecodeFixed64(record.payload.data());
        ++chain_index;
        continued = true;
        break;
      }
      if (record.type != kTypeBatch) {
        return Status::Corruption("unknown redo record type " +
                                  std::to_string(record.type));
      }
      MetadataBatch batch;
      KVS_RETURN_IF_ERROR(MetadataBatch::Decode(record.payload, &batch));
      KVS_RETURN_IF_ERROR(apply(batch));
      ++result.batches;
    }
    KVS_CHECK(continued);
  }
}

}  // namespace kvs::alloc
