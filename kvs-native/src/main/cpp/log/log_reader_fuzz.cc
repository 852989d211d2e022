// libFuzzer target for ReplayLog, which reads a region's value log back from
// the device after a restart, over an in-memory device.
//
// Input: a device image (testing/fuzz_device.h) with these parameters,
//
// | offset | size | field                                                   |
// |--------|------|---------------------------------------------------------|
// | 0      | 1    | log kind: 1 + value % 3                                 |
// | 1      | 1    | bits 0-2: chain length, value % 5; bit 3 + i: skip one  |
// |        |      | chain index before position i + 1; bit 7: reseal       |
// | 2      | 1    | chain index of the first segment                        |
// | 3      | 4    | segment of each chain position: value % 6 (5 lies past  |
// |        |      | the end of the device)                                  |
//
// and four stripes, for segments 0..3 of a 5-segment device (segment 4 stays
// zero: a segment committed to the log but never written). The region id is
// fixed (kFuzzRegionId; the seeds use it). With the reseal bit, the header of
// each stripe that starts a segment, and the records that follow it back to
// back, get their right checksums, so that mutations reach the checks behind
// them.
//
// Checked: no crash, sanitizer report or KVS_CHECK on any input; a replay
// that succeeds visits only puts and deletes, in increasing position within
// each segment of the chain, each one re-encoding to exactly the bytes at the
// place it names; and the tail it reports (end offset, partial block, nonce,
// end record) matches the device.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "alloc/device_offset.h"
#include "io/aligned_buffer.h"
#include "log/log_format.h"
#include "log/log_reader.h"
#include "log/log_writer.h"
#include "testing/fuzz_device.h"
#include "util/check.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/limits.h"

namespace {

namespace alloc = kvs::alloc;
namespace log = kvs::log;
using kvs::Status;

constexpr uint64_t kFuzzRegionId = 0x1234;
constexpr size_t kParamsBytes = 7;
constexpr size_t kStripes = 4;
constexpr uint64_t kDeviceSegments = kStripes + 1;
constexpr size_t kChainLengthMax = 4;
constexpr uint64_t kBlock = kvs::limits::io_alignment_bytes;
constexpr size_t kHeaderCrcOffset = 40;

// Fixes the checksums of a stripe that starts a segment: its header's, then
// those of the records that follow, as far as they lie whole in the stripe
// and have a known type.
void Reseal(const kvs::testing::Stripe& stripe, std::string* out) {
  out->assign(stripe.bytes);
  if (stripe.start_block != 0 || out->size() < kHeaderCrcOffset + 4) {
    return;
  }
  char* p = out->data();
  kvs::coding::EncodeFixed32(
      p + kHeaderCrcOffset,
      kvs::crc32c::Mask(kvs::crc32c::Value(p, kHeaderCrcOffset)));
  const uint64_t nonce = kvs::coding::DecodeFixed64(p + 32);
  size_t offset = log::kSegmentHeaderBytes;
  std::string record_bytes;
  while (offset + log::kRecordHeaderBytes <= out->size()) {
    const char* r = p + offset;
    const auto type = static_cast<uint8_t>(r[18]);
    const size_t key_size = kvs::coding::DecodeFixed16(r + 16);
    const size_t value_size = kvs::coding::DecodeFixed32(r + 12);
    // A record flagged with a write id keeps it (put and delete only).
    const bool has_id =
        (r[19] & log::kRecordHasWriteId) != 0 && (type == 1 || type == 2);
    const size_t total = log::kRecordHeaderBytes + key_size + value_size +
                         (has_id ? log::kWriteIdBytes : 0);
    if (type < 1 || type > 4 || total > out->size() - offset) {
      return;
    }
    // EncodeRecord copies key and value into place: give it a copy to read
    // from, since source and target must not overlap.
    record_bytes.assign(r, total);
    log::Record record;
    record.lsn = kvs::coding::DecodeFixed64(r + 4);
    record.type = static_cast<log::RecordType>(type);
    record.key = std::string_view(record_bytes).substr(20, key_size);
    record.value =
        std::string_view(record_bytes).substr(20 + key_size, value_size);
    record.continues_batch =
        (r[19] & log::kRecordContinuesBatch) != 0 && (type == 1 || type == 2);
    if (has_id) {
      const char* id = record_bytes.data() + 20 + key_size + value_size;
      record.write_id = {kvs::coding::DecodeFixed64(id),
                         kvs::coding::DecodeFixed64(id + 8)};
    }
    log::EncodeRecord(record, nonce, p + offset);
    offset += total;
  }
}

std::string ReadOrDie(kvs::io::File* file, uint64_t offset, size_t size) {
  std::string bytes(size, '\0');
  KVS_CHECK(file->Read(offset, size, bytes.data()).ok());
  return bytes;
}

uint64_t NonceOf(kvs::io::File* file, uint64_t segment) {
  const std::string block =
      ReadOrDie(file, alloc::SegmentStart(segment), log::kSegmentHeaderBytes);
  log::SegmentHeader header;
  KVS_CHECK_MSG(log::DecodeSegmentHeader(block, &header).ok(),
                "a record was visited in a segment without a valid header");
  return header.nonce;
}

struct Visit {
  log::Record record;
  std::string key;
  std::string value;
  uint64_t device_offset;
  uint32_t size;
};

void CheckVisits(kvs::io::File* file,
                 const std::map<uint64_t, uint64_t>& segments,
                 const std::vector<Visit>& visits) {
  uint64_t previous_segment = UINT64_MAX;
  uint64_t previous_offset = 0;
  for (const Visit& visit : visits) {
    const uint64_t segment = alloc::SegmentOf(visit.device_offset);
    const uint64_t offset = alloc::OffsetInSegment(visit.device_offset);
    bool in_chain = false;
    for (const auto& [chain_index, chained] : segments) {
      in_chain = in_chain || chained == segment;
    }
    KVS_CHECK_MSG(in_chain, "a visited record lies outside the chain");
    KVS_CHECK(offset >= log::kSegmentHeaderBytes);
    KVS_CHECK(offset + visit.size <= kvs::limits::segment_size_bytes);
    KVS_CHECK(segment != previous_segment || offset > previous_offset);
    previous_segment = segment;
    previous_offset = offset;

    log::Record record = visit.record;
    record.key = visit.key;
    record.value = visit.value;
    KVS_CHECK(record.type == log::RecordType::kPut ||
              record.type == log::RecordType::kDelete);
    KVS_CHECK(record.EncodedSize() == visit.size);
    std::string encoded(visit.size, '\0');
    log::EncodeRecord(record, NonceOf(file, segment), encoded.data());
    KVS_CHECK_MSG(encoded == ReadOrDie(file, visit.device_offset, visit.size),
                  "a visited record differs from the bytes it came from");
  }
}

void CheckTail(kvs::io::File* file,
               const std::map<uint64_t, uint64_t>& segments,
               const log::LogTail& tail) {
  KVS_CHECK(tail.segments == segments);
  if (segments.empty()) {
    return;
  }
  const uint64_t last = segments.rbegin()->second;
  const uint64_t end = tail.end_offset_in_segment;
  KVS_CHECK(end >= log::kSegmentHeaderBytes);
  KVS_CHECK(end <= kvs::limits::segment_size_bytes);
  if (!tail.header_valid) {
    KVS_CHECK(end == log::kSegmentHeaderBytes && !tail.ended);
    return;
  }
  KVS_CHECK(tail.nonce == NonceOf(file, last));
  const uint64_t block_start = end & ~(kBlock - 1);
  KVS_CHECK(tail.partial_block.size() == end - block_start);
  KVS_CHECK(tail.partial_block ==
            ReadOrDie(file, alloc::DeviceOffset(last, block_start),
                      end - block_start));
  // Replay stops past an end record, or else at the first bytes that are
  // not an intact record.
  log::Record record;
  size_t size = 0;
  if (tail.ended) {
    KVS_CHECK(end >= log::kSegmentHeaderBytes + log::kRecordHeaderBytes);
    const std::string end_record = ReadOrDie(
        file, alloc::DeviceOffset(last, end - log::kRecordHeaderBytes),
        log::kRecordHeaderBytes);
    const bool decoded =
        log::DecodeRecord(end_record, tail.nonce, &record, &size);
    KVS_CHECK_MSG(decoded && record.type == log::RecordType::kSegmentEnd &&
                      size == log::kRecordHeaderBytes,
                  "an ended tail does not end past an end record");
  } else {
    const std::string rest = ReadOrDie(file, alloc::DeviceOffset(last, end),
                                       kvs::limits::segment_size_bytes - end);
    KVS_CHECK_MSG(!log::DecodeRecord(rest, tail.nonce, &record, &size),
                  "replay stopped before an intact record");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static kvs::testing::FuzzDevice* const device =
      new kvs::testing::FuzzDevice(kDeviceSegments);
  std::string_view params;
  std::vector<kvs::testing::Stripe> stripes;
  if (!kvs::testing::SplitDeviceImage(
          std::string_view(reinterpret_cast<const char*>(data), size),
          kParamsBytes, kStripes, &params, &stripes)) {
    return 0;
  }
  const auto param = [&](size_t i) { return static_cast<uint8_t>(params[i]); };
  log::LogIdentity identity;
  identity.region_id = kFuzzRegionId;
  identity.kind = static_cast<log::LogKind>(1 + param(0) % 3);
  identity.catalog_prefix = "r/fuzz/log/";
  const size_t chain_length = (param(1) & 0x7) % (kChainLengthMax + 1);
  std::map<uint64_t, uint64_t> segments;
  // Gaps in the chain: garbage collection releases segments from the middle
  // of a log, so the catalog need not list consecutive chain indexes.
  uint64_t chain_index = param(2);
  for (size_t i = 0; i < chain_length; ++i) {
    segments[chain_index] = param(3 + i) % (kDeviceSegments + 1);
    chain_index += 1 + ((param(1) >> (3 + i)) & 1);
  }
  std::vector<std::string> resealed(kStripes);
  if ((param(1) & 0x80) != 0) {
    for (size_t i = 0; i < kStripes; ++i) {
      Reseal(stripes[i], &resealed[i]);
      stripes[i].bytes = resealed[i];
    }
  }
  device->Load(0, stripes);

  std::unique_ptr<kvs::io::File> file = device->Open();
  std::vector<Visit> visits;
  log::LogTail tail;
  const Status status = log::ReplayLog(
      file.get(), identity, segments,
      [&](const log::Record& record, uint64_t device_offset, uint32_t size) {
        visits.push_back({record, std::string(record.key),
                          std::string(record.value), device_offset, size});
        return Status::Ok();
      },
      &tail);
  if (status.ok()) {
    CheckVisits(file.get(), segments, visits);
    CheckTail(file.get(), segments, tail);
  } else {
    KVS_CHECK_MSG(
        status.IsCorruption() || status.code() == Status::Code::kIoError,
        "replay failed with neither Corruption nor IoError");
  }
  device->Reset();
  return 0;
}
