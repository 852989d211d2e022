#include "log/log_reader.h"

#include <algorithm>

#include "alloc/device_offset.h"
#include "io/aligned_buffer.h"
#include "util/coding.h"
#include "util/limits.h"

namespace kvs::log {
namespace {

constexpr uint64_t kBlock = limits::io_alignment_bytes;

std::string Describe(const LogIdentity& identity, uint64_t chain_index,
                     uint64_t segment) {
  return std::string(LogKindName(identity.kind)) + " log of region " +
         std::to_string(identity.region_id) + ", segment " +
         std::to_string(segment) + " (chain index " +
         std::to_string(chain_index) + ")";
}

// Whether an intact sync mark after `offset` claims durability past
// `position`: then the damage at `offset` hit synced records.
bool SyncedPastDamage(std::string_view data, size_t offset, uint64_t nonce,
                      uint64_t position) {
  for (size_t probe = offset + 1; probe + kRecordHeaderBytes <= data.size();
       ++probe) {
    // Only a sync mark matters: its fixed type and sizes rule out almost
    // every position before the checksum is computed.
    const char* p = data.data() + probe;
    if (static_cast<uint8_t>(p[18]) !=
            static_cast<uint8_t>(RecordType::kSyncMark) ||
        coding::DecodeFixed16(p + 16) != 0 ||
        coding::DecodeFixed32(p + 12) != 8) {
      continue;
    }
    Record record;
    size_t size = 0;
    if (DecodeRecord(data.substr(probe), nonce, &record, &size) &&
        record.type == RecordType::kSyncMark && record.value.size() == 8 &&
        coding::DecodeFixed64(record.value.data()) > position) {
      return true;
    }
  }
  return false;
}

}  // namespace

Status ReplayLog(io::File* file, const LogIdentity& identity,
                 const std::map<uint64_t, uint64_t>& segments,
                 const RecordVisitor& visit, LogTail* tail,
                 std::optional<uint64_t> end_in_last) {
  LogTail result;
  result.segments = segments;
  if (segments.empty()) {
    *tail = std::move(result);
    return Status::Ok();
  }
  io::AlignedBuffer buffer(limits::segment_size_bytes);
  // Chain indexes may have gaps: garbage collection releases segments from
  // the middle of a large log, and the caller may skip segments it knows
  // to hold nothing it needs. Each header must still name its index.
  const uint64_t last_index = segments.rbegin()->first;
  for (const auto& [chain_index, segment] : segments) {
    const bool last = chain_index == last_index;
    KVS_RETURN_IF_ERROR(
        file->Read(alloc::SegmentStart(segment), buffer.size(), buffer.data()));
    const std::string_view data = buffer.view();
    SegmentHeader header;
    const Status header_status = DecodeSegmentHeader(data, &header);
    const bool header_matches =
        header_status.ok() &&
        (header.region_id == identity.region_id ||
         std::find(identity.ancestors.begin(), identity.ancestors.end(),
                   header.region_id) != identity.ancestors.end()) &&
        header.kind == identity.kind && header.chain_index == chain_index;
    if (!header_matches) {
      if (last) {
        // Committed, but the crash came before its first write.
        result.header_valid = false;
        result.end_offset_in_segment = kSegmentHeaderBytes;
        break;
      }
      return Status::Corruption("damaged header in " +
                                Describe(identity, chain_index, segment));
    }
    // The log ends at `offset` of this (last) segment, not ended there.
    auto end_at = [&](size_t offset) {
      result.nonce = header.nonce;
      result.end_offset_in_segment = offset;
      const size_t block_start = offset & ~(kBlock - 1);
      result.partial_block.assign(data.data() + block_start,
                                  offset - block_start);
    };
    size_t offset = kSegmentHeaderBytes;
    while (true) {
      Record record;
      size_t size = 0;
      if (last && end_in_last && offset >= *end_in_last) {
        if (offset != *end_in_last) {
          return Status::Corruption("no record starts at the recovery point " +
                                    std::to_string(*end_in_last) + " of " +
                                    Describe(identity, chain_index, segment));
        }
        end_at(offset);
        break;
      }
      if (!DecodeRecord(data.substr(offset), header.nonce, &record, &size)) {
        const uint64_t position = alloc::DeviceOffset(chain_index, offset);
        if (!last || SyncedPastDamage(data, offset, header.nonce, position)) {
          return Status::Corruption("damaged record in " +
                                    Describe(identity, chain_index, segment) +
                                    " at offset " + std::to_string(offset));
        }
        end_at(offset);
        break;
      }
      if (record.type == RecordType::kSegmentEnd) {
        if (last) {
          // An ended log ends past its end record: a writer reopened on it
          // is where the one before the restart was.
          end_at(offset + size);
        } else {
          result.nonce = header.nonce;
          result.end_offset_in_segment = offset;
        }
        result.ended = true;
        break;
      }
      if (last && (record.type == RecordType::kPut ||
                   record.type == RecordType::kDelete)) {
        if (record.type == RecordType::kPut) {
          result.last_put_bytes += size;
        }
        result.last_max_lsn = std::max(result.last_max_lsn, record.lsn);
      }
      if (record.type == RecordType::kPut ||
          record.type == RecordType::kDelete) {
        KVS_RETURN_IF_ERROR(visit(record, alloc::DeviceOffset(segment, offset),
                                  static_cast<uint32_t>(size)));
      }
      offset += size;
    }
    if (!last && !result.ended) {
      return Status::Corruption("missing end record in " +
                                Describe(identity, chain_index, segment));
    }
    if (!last) {
      result.ended = false;
    }
  }
  *tail = std::move(result);
  return Status::Ok();
}

}  // namespace kvs::log
