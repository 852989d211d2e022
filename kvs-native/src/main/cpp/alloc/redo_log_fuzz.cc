// libFuzzer target for ReplayRedoLog, which rebuilds a volume's metadata from
// the redo segments on the device at open, over an in-memory device.
//
// Input: a device image (testing/fuzz_device.h) with these parameters,
//
// | offset | size | field                                                  |
// |--------|------|--------------------------------------------------------|
// | 0      | 1    | bits 0-1: redo_first_segment; bit 7: reseal checksums  |
// | 1      | 8    | redo_first_sequence                                    |
//
// and four stripes, for segments 0..3 of a 5-segment device; segment 4 is
// never written by the input, so an append that needs a new segment can take
// it. The volume id and generation are fixed (kFuzzVolumeId, kFuzzGeneration
// below; the seeds use the same), so that the fuzzer does not have to find
// them. With the reseal bit, every segment header and every record the
// stripes hold whole gets its right checksum, so that mutations reach the
// checks behind the checksums.
//
// Checked: no crash, sanitizer report or KVS_CHECK on any input; a replay
// that succeeds describes a consistent chain (starts where the superblock
// says, ends in its last segment at a block boundary, one sequence number per
// batch or continue record); every batch it hands out survives an encode /
// decode round trip; and a writer resumed at the end appends one more batch
// that a second replay finds after the same batches as before.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "alloc/device_offset.h"
#include "alloc/metadata_batch.h"
#include "alloc/redo_log.h"
#include "alloc/superblock.h"
#include "testing/fuzz_device.h"
#include "util/check.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/limits.h"

namespace {

namespace alloc = kvs::alloc;
using kvs::Status;

constexpr alloc::VolumeId kFuzzVolumeId = {
    'f', 'u', 'z', 'z', 'r', 'e', 'd', 'o', 0, 1, 2, 3, 4, 5, 6, 0xff};
constexpr uint64_t kFuzzGeneration = 7;
constexpr size_t kParamsBytes = 9;
constexpr size_t kStripes = 4;
constexpr uint64_t kSpareSegment = kStripes;  // never loaded from the input
constexpr uint64_t kBlock = kvs::limits::io_alignment_bytes;
constexpr size_t kHeaderCrcOffset = 40;

// Fixes the checksums of the headers and records that `stripe` holds whole,
// following the table in alloc/redo_log.h.
void Reseal(const kvs::testing::Stripe& stripe, std::string* out) {
  out->assign(stripe.bytes);
  char* p = out->data();
  for (size_t offset = 0; offset < out->size(); offset += kBlock) {
    const bool header_block = stripe.start_block == 0 && offset == 0;
    if (header_block) {
      if (out->size() >= kHeaderCrcOffset + 4) {
        kvs::coding::EncodeFixed32(
            p + kHeaderCrcOffset,
            kvs::crc32c::Mask(kvs::crc32c::Value(p, kHeaderCrcOffset)));
      }
      continue;
    }
    if (offset + alloc::kRedoRecordHeaderBytes > out->size()) {
      break;
    }
    const uint64_t length = kvs::coding::DecodeFixed32(p + offset + 4);
    if (offset + alloc::kRedoRecordHeaderBytes + length <= out->size()) {
      kvs::coding::EncodeFixed32(
          p + offset,
          kvs::crc32c::Mask(kvs::crc32c::Value(
              p + offset + 4, alloc::kRedoRecordHeaderBytes - 4 + length)));
    }
  }
}

struct Replayed {
  Status status;
  alloc::RedoReplay replay;
  std::vector<std::string> batches;  // each re-encoded
};

Replayed Replay(kvs::io::File* file, const alloc::Superblock& superblock) {
  Replayed result;
  result.status = alloc::ReplayRedoLog(
      file, superblock,
      [&](const alloc::MetadataBatch& batch) {
        const std::string encoded = batch.Encode();
        alloc::MetadataBatch again;
        KVS_CHECK_MSG(alloc::MetadataBatch::Decode(encoded, &again).ok() &&
                          again.Encode() == encoded,
                      "a replayed batch does not survive a round trip");
        result.batches.push_back(encoded);
        return Status::Ok();
      },
      &result.replay);
  return result;
}

void CheckChain(const alloc::Superblock& superblock, const Replayed& replayed) {
  const alloc::RedoReplay& replay = replayed.replay;
  const alloc::RedoPosition& end = replay.end;
  KVS_CHECK(!replay.segments.empty());
  KVS_CHECK(replay.segments.front() == superblock.redo_first_segment);
  KVS_CHECK(replay.segments.back() == end.segment);
  KVS_CHECK(replay.segments.size() == end.chain_index + 1);
  KVS_CHECK(replay.batches == replayed.batches.size());
  KVS_CHECK(end.offset_in_segment % kBlock == 0);
  KVS_CHECK(end.offset_in_segment >= kBlock);
  KVS_CHECK(end.offset_in_segment <= kvs::limits::segment_size_bytes);
  // Unsigned arithmetic: a chain may start anywhere in the sequence space.
  KVS_CHECK_MSG(end.next_sequence == superblock.redo_first_sequence +
                                         replay.batches + end.chain_index,
                "sequence numbers do not count the records replayed");
}

// Appends one batch where the replay ended and checks that a second replay
// sees it. Skipped when the spare segment is part of the chain: then no
// fresh segment is at hand for a writer that must grow the chain.
void CheckAppend(kvs::testing::FuzzDevice* device,
                 const alloc::Superblock& superblock,
                 const Replayed& replayed) {
  for (uint64_t segment : replayed.replay.segments) {
    if (segment == kSpareSegment) {
      return;
    }
  }
  std::unique_ptr<kvs::io::File> file = device->Open();
  alloc::RedoLogWriter writer(
      file.get(), kFuzzVolumeId, kFuzzGeneration,
      [](uint64_t* segment) {
        *segment = kSpareSegment;
        return Status::Ok();
      },
      [](uint64_t) {});
  writer.Resume(replayed.replay.end);
  alloc::MetadataBatch batch;
  batch.Allocate(3);
  batch.Put(std::string("k\0\xff", 3), "appended after replay");
  uint64_t linked = 0;
  KVS_CHECK_MSG(writer.Append(batch, &linked).ok(),
                "appending after a successful replay failed");

  const Replayed again = Replay(file.get(), superblock);
  KVS_CHECK_MSG(again.status.ok(), "replay fails after an append");
  CheckChain(superblock, again);
  KVS_CHECK_MSG(again.batches.size() == replayed.batches.size() + 1,
                "the appended batch is not replayed");
  for (size_t i = 0; i < replayed.batches.size(); ++i) {
    KVS_CHECK(again.batches[i] == replayed.batches[i]);
  }
  KVS_CHECK(again.batches.back() == batch.Encode());
  KVS_CHECK(again.replay.end.segment == writer.position().segment &&
            again.replay.end.offset_in_segment ==
                writer.position().offset_in_segment);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static kvs::testing::FuzzDevice* const device =
      new kvs::testing::FuzzDevice(kStripes + 1);
  std::string_view params;
  std::vector<kvs::testing::Stripe> stripes;
  if (!kvs::testing::SplitDeviceImage(
          std::string_view(reinterpret_cast<const char*>(data), size),
          kParamsBytes, kStripes, &params, &stripes)) {
    return 0;
  }
  const bool reseal = (params[0] & 0x80) != 0;
  std::vector<std::string> resealed(kStripes);
  if (reseal) {
    for (size_t i = 0; i < kStripes; ++i) {
      Reseal(stripes[i], &resealed[i]);
      stripes[i].bytes = resealed[i];
    }
  }
  device->Load(0, stripes);

  alloc::Superblock superblock;
  superblock.volume_id = kFuzzVolumeId;
  superblock.generation = kFuzzGeneration;
  superblock.redo_first_segment = static_cast<uint8_t>(params[0]) & 0x3;
  superblock.redo_first_sequence =
      kvs::coding::DecodeFixed64(params.data() + 1);

  std::unique_ptr<kvs::io::File> file = device->Open();
  const Replayed replayed = Replay(file.get(), superblock);
  if (replayed.status.ok()) {
    CheckChain(superblock, replayed);
    CheckAppend(device, superblock, replayed);
  } else {
    KVS_CHECK_MSG(replayed.status.IsCorruption() ||
                      replayed.status.code() == Status::Code::kIoError,
                  "replay failed with neither Corruption nor IoError");
  }
  device->Reset();
  return 0;
}
