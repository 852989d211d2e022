#include "replication/replica_chain.h"

#include <algorithm>

#include "alloc/device_offset.h"
#include "io/aligned_buffer.h"
#include "util/limits.h"

namespace kvs::replication {
namespace {

constexpr size_t kSegment = limits::segment_size_bytes;
constexpr size_t kBlock = limits::io_alignment_bytes;

// The first `bytes` bytes of `copy`'s segment, read whole blocks at a time
// into `buffer` (direct I/O).
Status ReadCopy(io::File* file, const MirroredSegment& copy, size_t bytes,
                io::AlignedBuffer* buffer, std::string_view* read) {
  if (bytes > kSegment) {
    return Status::Corruption("a log copy of " + std::to_string(bytes) +
                              " bytes, more than a segment");
  }
  const size_t blocks = (bytes + kBlock - 1) / kBlock * kBlock;
  if (blocks > 0) {
    KVS_RETURN_IF_ERROR(file->Read(alloc::SegmentStart(copy.backup_segment),
                                   blocks, buffer->data()));
  }
  *read = std::string_view(buffer->data(), bytes);
  return Status::Ok();
}

}  // namespace

SegmentWalk WalkSegment(std::string_view bytes) {
  SegmentWalk walk;
  if (bytes.size() < log::kSegmentHeaderBytes ||
      !log::DecodeSegmentHeader(bytes, &walk.header).ok()) {
    return walk;
  }
  walk.header_valid = true;
  size_t offset = log::kSegmentHeaderBytes;
  while (offset < bytes.size()) {
    log::Record record;
    size_t size = 0;
    if (!log::DecodeRecord(bytes.substr(offset), walk.header.nonce, &record,
                           &size)) {
      break;
    }
    offset += size;
    if (record.type == log::RecordType::kPut) walk.put_bytes += size;
    if (record.type == log::RecordType::kPut ||
        record.type == log::RecordType::kDelete) {
      walk.max_lsn = std::max(walk.max_lsn, record.lsn);
    }
    if (record.type == log::RecordType::kSegmentEnd) {
      walk.ended = true;
      break;
    }
  }
  walk.end = offset;
  return walk;
}

Status PlanReplicaChain(io::File* file, log::LogKind kind,
                        const std::map<uint64_t, MirroredSegment>& copies,
                        const std::vector<LandedLog>& landed,
                        std::map<uint64_t, ChainPosition>* chain) {
  chain->clear();
  // How many bytes each position's best candidate so far holds (0: none).
  std::map<uint64_t, size_t> best_bytes;
  io::AlignedBuffer segment(kSegment);
  for (const auto& [primary, copy] : copies) {
    ChainPosition& position = (*chain)[copy.chain_index];
    if (position.copy) {
      return Status::Corruption("two copies of chain position " +
                                std::to_string(copy.chain_index) + " of the " +
                                log::LogKindName(kind) + " log");
    }
    std::string_view bytes;
    position.primary_segment = primary;
    position.copy = copy;
    if (copy.sealed && copy.walk.has_value()) {
      // Walked when it was persisted: only its header is read back.
      KVS_RETURN_IF_ERROR(ReadCopy(
          file, copy, std::min<size_t>(copy.bytes, kBlock), &segment, &bytes));
      position.walk = WalkSegment(bytes.substr(0, log::kSegmentHeaderBytes));
      position.walk.end = copy.walk->end;
      position.walk.ended = copy.walk->ended;
      position.walk.put_bytes = copy.walk->put_bytes;
      position.walk.max_lsn = copy.walk->max_lsn;
    } else {
      KVS_RETURN_IF_ERROR(ReadCopy(file, copy, copy.bytes, &segment, &bytes));
      position.walk = WalkSegment(bytes);
    }
    best_bytes[copy.chain_index] = copy.bytes;
  }
  for (size_t i = 0; i < landed.size(); ++i) {
    if (landed[i].kind != kind) continue;
    const SegmentWalk walk = WalkSegment(landed[i].bytes);
    if (!walk.header_valid || walk.header.kind != kind) continue;
    ChainPosition& position = (*chain)[walk.header.chain_index];
    const bool better = best_bytes[walk.header.chain_index] == 0 ||
                        walk.end > position.walk.end ||
                        (position.walk.header_valid &&
                         position.walk.header.nonce != walk.header.nonce);
    if (!better) continue;
    position.buffer = i;
    position.walk = walk;
    best_bytes[walk.header.chain_index] = walk.end;
  }
  bool tail_seen = false;
  for (auto& [chain_index, position] : *chain) {
    // Past the tail: never acknowledged. Bytes without a valid header of
    // this position hold nothing either.
    if (tail_seen || !position.walk.header_valid ||
        position.walk.header.chain_index != chain_index) {
      continue;
    }
    position.kept = true;
    position.tail = !position.walk.ended;
    tail_seen = position.tail;
  }
  return Status::Ok();
}

Status ReadChainPosition(io::File* file, const ChainPosition& position,
                         const std::vector<LandedLog>& landed,
                         std::string* bytes) {
  if (position.buffer) {
    if (*position.buffer >= landed.size() ||
        landed[*position.buffer].bytes.size() < position.walk.end) {
      return Status::InvalidArgument("a chain position names a buffer " +
                                     std::to_string(*position.buffer) +
                                     " it was not planned from");
    }
    bytes->assign(landed[*position.buffer].bytes.substr(0, position.walk.end));
    return Status::Ok();
  }
  if (!position.copy) {
    return Status::InvalidArgument("a chain position with no bytes");
  }
  io::AlignedBuffer segment(kSegment);
  std::string_view read;
  KVS_RETURN_IF_ERROR(
      ReadCopy(file, *position.copy, position.walk.end, &segment, &read));
  bytes->assign(read);
  return Status::Ok();
}

}  // namespace kvs::replication
