// The seed corpus of the fuzz targets (*_fuzz.cc), committed under
// src/test/fuzz-corpus/<target>/: small valid inputs made here by the
// engine's own encoders and writers, so that fuzzing starts from inputs that
// pass every check and mutates its way into the corners from there.
//
// The test makes every seed, checks that the engine's reader accepts it, and
// compares it with the committed file, so a format change cannot leave the
// fuzzers starting from stale inputs unnoticed. To rewrite the corpus after a
// deliberate format change:
//
//   KVS_UPDATE_FUZZ_SEEDS=1 ctest --test-dir <build> -R FuzzSeeds
//
// The corpus that fuzzing grows is written under target/ and never
// committed; only these seeds are.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "alloc/checkpoint.h"
#include "alloc/device_offset.h"
#include "alloc/metadata_batch.h"
#include "alloc/redo_log.h"
#include "alloc/superblock.h"
#include "btree/bloom_filter.h"
#include "btree/node_format.h"
#include "channel/bootstrap.h"
#include "channel/bootstrap_auth.h"
#include "channel/message_format.h"
#include "log/log_format.h"
#include "log/log_reader.h"
#include "lsm/key_bounds.h"
#include "lsm/level.h"
#include "replication/replication_format.h"
#include "replication/send_index_format.h"
#include "testing/fuzz_device.h"
#include "testing/memory_device.h"
#include "testing/tree_entries.h"
#include "testing/vectors.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/limits.h"

namespace kvs::testing {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kBlock = limits::io_alignment_bytes;

// target -> seed name -> bytes
using Corpus = std::map<std::string, std::map<std::string, std::string>>;

std::string KeyWithEdgeBytes(std::string_view name) {
  return std::string(name) + std::string("\x00\xff", 2);
}

// --- Decoders of single values. -------------------------------------------

void AddSuperblockSeeds(Corpus* corpus) {
  auto& seeds = (*corpus)["superblock_fuzz"];
  seeds["new_volume"] = alloc::Superblock().Encode();
  alloc::Superblock superblock;
  superblock.sequence = 42;
  superblock.volume_id = {1, 2, 3, 4, 5, 6, 7, 8, 0, 0xff, 0x80, 0x7f};
  superblock.generation = 9;
  superblock.checkpoint_bytes = 3 * limits::segment_size_bytes - 100;
  superblock.checkpoint_crc = 0xdeadbeef;
  superblock.checkpoint_segments = {5, 6, 70000};
  superblock.redo_first_segment = 8;
  superblock.redo_first_sequence = 1000;
  seeds["three_checkpoint_segments"] = superblock.Encode();
  superblock.checkpoint_segments.assign(alloc::kCheckpointSegmentsMax, 3);
  seeds["most_checkpoint_segments"] = superblock.Encode();
  superblock.format_version = 1;  // before segment reference counts
  seeds["format_1"] = superblock.Encode();
  for (const auto& [name, bytes] : seeds) {
    alloc::Superblock decoded;
    EXPECT_TRUE(alloc::Superblock::Decode(bytes, &decoded).ok()) << name;
  }
}

alloc::MetadataBatch FullBatch() {
  alloc::MetadataBatch batch;
  batch.Allocate(3);
  batch.Allocate(UINT64_MAX);
  batch.Free(127);
  batch.FreeDeferred(128);
  batch.Put("r/1/level/1", "descriptor");
  batch.Put(KeyWithEdgeBytes("k"), std::string(200, '\xff'));
  batch.Put("", "");
  batch.Delete(KeyWithEdgeBytes("gone"));
  batch.Share(3);
  batch.Share(3);
  batch.Share(UINT64_MAX >> 21);
  return batch;
}

void AddMetadataBatchSeeds(Corpus* corpus) {
  auto& seeds = (*corpus)["metadata_batch_fuzz"];
  seeds["empty"] = alloc::MetadataBatch().Encode();
  seeds["every_field"] = FullBatch().Encode();
  // Volume format 1: no shares list.
  std::string format_1 = alloc::MetadataBatch().Encode();
  format_1.pop_back();
  seeds["format_1"] = format_1;
  for (const auto& [name, bytes] : seeds) {
    alloc::MetadataBatch decoded;
    EXPECT_TRUE(alloc::MetadataBatch::Decode(bytes, &decoded).ok()) << name;
  }
}

void AddCheckpointSeeds(Corpus* corpus) {
  auto& seeds = (*corpus)["checkpoint_fuzz"];
  seeds["empty"] = alloc::EncodeCheckpoint(alloc::CheckpointImage());
  alloc::CheckpointImage image;
  image.generation = 12;
  image.allocated = alloc::SegmentBitmap(130);
  for (uint64_t segment : {0, 1, 63, 64, 129}) {
    image.allocated.Insert(segment);
  }
  image.catalog["r/1/level/1"] = "descriptor";
  image.catalog[KeyWithEdgeBytes("k")] = std::string("\x00\xff", 2);
  image.catalog["empty value"] = "";
  seeds["bitmap_and_catalog"] = alloc::EncodeCheckpoint(image);
  image.shares = {{1, 1}, {64, 3}, {129, UINT64_MAX >> 1}};
  seeds["shared_segments"] = alloc::EncodeCheckpoint(image);
  image.shares.clear();
  // Volume format 1: "KVSCKPT1" and no shares section.
  std::string format_1 = alloc::EncodeCheckpoint(image);
  format_1[7] = '1';
  format_1.pop_back();
  seeds["format_1"] = format_1;
  for (const auto& [name, bytes] : seeds) {
    alloc::CheckpointImage decoded;
    EXPECT_TRUE(alloc::DecodeCheckpoint(bytes, &decoded).ok()) << name;
  }
  // Found by checkpoint_fuzz: a bitmap capacity of 2^64 - 1 made the word
  // count wrap to zero, and DecodeFrom read words.back() of an empty vector.
  std::string wrapping("KVSCKPT1", 8);
  coding::PutFixed64(&wrapping, 1);
  coding::PutVarint64(&wrapping, UINT64_MAX);
  wrapping.append(4, '\0');
  alloc::CheckpointImage decoded;
  EXPECT_TRUE(alloc::DecodeCheckpoint(wrapping, &decoded).IsCorruption());
  seeds["regression_capacity_wraps"] = wrapping;
}

void AddLevelDescriptorSeeds(Corpus* corpus) {
  auto& seeds = (*corpus)["level_descriptor_fuzz"];
  seeds["empty_level"] = lsm::LevelDescriptor().Encode();
  lsm::LevelDescriptor descriptor;
  descriptor.root = alloc::DeviceOffset(17, 8192);
  descriptor.entries = 100000;
  descriptor.kv_bytes = 12345678;
  descriptor.index_segments = {17, 18, 19};
  descriptor.bloom_bytes = limits::segment_size_bytes + 5;
  descriptor.bloom_chunks = {alloc::DeviceOffset(19, 0),
                             alloc::DeviceOffset(20, 0)};
  descriptor.medium_segments = {22, UINT64_MAX >> 21};
  seeds["every_field"] = descriptor.Encode();
  for (const auto& [name, bytes] : seeds) {
    lsm::LevelDescriptor decoded;
    EXPECT_TRUE(lsm::LevelDescriptor::Decode(bytes, &decoded).ok()) << name;
  }
}

void AddKeyBoundsSeeds(Corpus* corpus) {
  auto& seeds = (*corpus)["key_bounds_fuzz"];
  seeds["first_daughter"] =
      lsm::RegionOrigin{{"", std::string("user5000")}, {7}}.Encode();
  seeds["last_daughter"] =
      lsm::RegionOrigin{{"user5000", std::nullopt}, {7}}.Encode();
  seeds["split_twice"] = lsm::RegionOrigin{
      {KeyWithEdgeBytes("a"), KeyWithEdgeBytes("b")},
      {7, 12, UINT64_MAX}}.Encode();
  for (const auto& [name, bytes] : seeds) {
    lsm::RegionOrigin decoded;
    EXPECT_TRUE(lsm::RegionOrigin::Decode(bytes, &decoded).ok()) << name;
  }
}

// log_format_fuzz takes an 8-byte nonce, then the bytes to decode.
void AddLogFormatSeeds(Corpus* corpus) {
  auto& seeds = (*corpus)["log_format_fuzz"];
  constexpr uint64_t nonce = 0x0123456789abcdef;
  std::string prefix(8, '\0');
  coding::EncodeFixed64(prefix.data(), nonce);
  const auto record_seed = [&](log::RecordType type, std::string_view key,
                               std::string_view value) {
    log::Record record;
    record.lsn = 77;
    record.type = type;
    record.key = key;
    record.value = value;
    std::string bytes(record.EncodedSize(), '\0');
    log::EncodeRecord(record, nonce, bytes.data());
    log::Record decoded;
    size_t size = 0;
    EXPECT_TRUE(log::DecodeRecord(bytes, nonce, &decoded, &size));
    return prefix + bytes;
  };
  const std::string key = KeyWithEdgeBytes("key");
  seeds["put"] = record_seed(log::RecordType::kPut, key, "value\xff");
  seeds["delete"] = record_seed(log::RecordType::kDelete, key, "");
  std::string position(8, '\0');
  coding::EncodeFixed64(position.data(), alloc::DeviceOffset(2, 5000));
  seeds["sync_mark"] = record_seed(log::RecordType::kSyncMark, "", position);
  seeds["segment_end"] = record_seed(log::RecordType::kSegmentEnd, "", "");
  log::SegmentHeader header;
  header.region_id = 5;
  header.kind = log::LogKind::kMedium;
  header.chain_index = 3;
  header.nonce = nonce;
  std::string block(log::kSegmentHeaderBytes, '\0');
  log::EncodeSegmentHeader(header, block.data());
  EXPECT_TRUE(log::DecodeSegmentHeader(block, &header).ok());
  seeds["segment_header"] = prefix + block;
}

void AddNodeSeeds(Corpus* corpus) {
  auto& seeds = (*corpus)["node_fuzz"];
  TreeEntriesOptions options;
  options.count = 400;
  const TreeEntries entries = RandomTreeEntries(7, options);
  MemoryNodeStore store;
  uint64_t root = 0;
  ASSERT_TRUE(BuildTree(entries, &store, &root).ok());
  for (const MemoryNodeStore::WrittenNode& node : store.written()) {
    std::string bytes;
    ASSERT_TRUE(store.Read(node.offset, node.size, &bytes).ok());
    ASSERT_TRUE(btree::ValidateNode(bytes).ok());
    const bool leaf = node.size == btree::node_format::leaf_node_size_bytes;
    seeds[leaf ? "leaf" : "index"] = bytes;  // the last of each kind
  }
  EXPECT_EQ(seeds.size(), 2u) << "the tree should have leaves and an index";
}

void AddBloomFilterSeeds(Corpus* corpus) {
  auto& seeds = (*corpus)["bloom_filter_fuzz"];
  btree::BloomFilterBuilder empty;
  seeds["no_keys"] = empty.Finish();
  btree::BloomFilterBuilder builder(10, /*hash_seed=*/3);
  for (int i = 0; i < 200; ++i) {
    builder.AddKey(KeyWithEdgeBytes("key" + std::to_string(i)));
  }
  seeds["200_keys"] = builder.Finish();
  for (const auto& [name, bytes] : seeds) {
    btree::BloomFilterReader reader;
    EXPECT_TRUE(btree::BloomFilterReader::Open(bytes, &reader).ok()) << name;
  }
}

// --- Whole-device readers: device images (testing/fuzz_device.h). --------

// The bytes of `segment` up to `end`, written through `device`.
std::string SegmentPrefix(MemoryDevice* device, uint64_t segment,
                          uint64_t end) {
  return device->ReadDurable(alloc::SegmentStart(segment), end);
}

// The parameters redo_log_fuzz.cc documents; its volume id and generation.
constexpr alloc::VolumeId kRedoVolumeId = {
    'f', 'u', 'z', 'z', 'r', 'e', 'd', 'o', 0, 1, 2, 3, 4, 5, 6, 0xff};
constexpr uint64_t kRedoGeneration = 7;

std::string RedoParams(uint64_t first_segment, uint64_t first_sequence) {
  std::string params(9, '\0');
  params[0] = static_cast<char>(first_segment);
  coding::EncodeFixed64(params.data() + 1, first_sequence);
  return params;
}

// A redo record as drawn in alloc/redo_log.h, padded to whole blocks.
std::string RedoRecord(uint8_t type, uint64_t sequence,
                       std::string_view payload) {
  const size_t bytes = alloc::kRedoRecordHeaderBytes + payload.size();
  std::string record((bytes + kBlock - 1) / kBlock * kBlock, '\0');
  char* p = record.data();
  coding::EncodeFixed32(p + 4, static_cast<uint32_t>(payload.size()));
  coding::EncodeFixed64(p + 8, kRedoGeneration);
  coding::EncodeFixed64(p + 16, sequence);
  p[24] = static_cast<char>(type);
  record.replace(alloc::kRedoRecordHeaderBytes, payload.size(), payload);
  coding::EncodeFixed32(p, crc32c::Mask(crc32c::Value(p + 4, bytes - 4)));
  return record;
}

std::string RedoSegmentHeader(uint64_t chain_index) {
  std::string block(kBlock, '\0');
  char* p = block.data();
  block.replace(0, 8, "KVSREDO1");
  std::copy(kRedoVolumeId.begin(), kRedoVolumeId.end(), p + 8);
  coding::EncodeFixed64(p + 24, kRedoGeneration);
  coding::EncodeFixed64(p + 32, chain_index);
  coding::EncodeFixed32(p + 40, crc32c::Mask(crc32c::Value(p, 40)));
  return block;
}

// Replays `stripes` (stripe i at the start of segment i) as redo_log_fuzz
// does, expecting success.
alloc::RedoReplay ReplayRedoSeed(const std::vector<std::string>& stripes,
                                 uint64_t first_segment,
                                 uint64_t first_sequence) {
  FuzzDevice device(stripes.size() + 1);
  std::vector<Stripe> views;
  for (const std::string& stripe : stripes) {
    views.push_back({0, stripe});
  }
  device.Load(0, views);
  alloc::Superblock superblock;
  superblock.volume_id = kRedoVolumeId;
  superblock.generation = kRedoGeneration;
  superblock.redo_first_segment = first_segment;
  superblock.redo_first_sequence = first_sequence;
  alloc::RedoReplay replay;
  std::unique_ptr<io::File> file = device.Open();
  EXPECT_TRUE(alloc::ReplayRedoLog(
                  file.get(), superblock,
                  [](const alloc::MetadataBatch&) { return Status::Ok(); },
                  &replay)
                  .ok());
  return replay;
}

std::string JoinStripes(std::string_view params,
                        const std::vector<std::string>& stripes) {
  std::vector<Stripe> views;
  for (const std::string& stripe : stripes) {
    views.push_back({0, stripe});
  }
  return JoinDeviceImage(params, views);
}

void AddRedoLogSeeds(Corpus* corpus) {
  auto& seeds = (*corpus)["redo_log_fuzz"];
  constexpr uint64_t first_sequence = 100;
  // One segment written by the real writer: three batches.
  {
    std::shared_ptr<MemoryDevice> device =
        MemoryDevice::Create(4 * limits::segment_size_bytes);
    std::unique_ptr<io::File> file = device->Open();
    ASSERT_TRUE(file->Grow(4 * limits::segment_size_bytes).ok());
    alloc::RedoLogWriter writer(
        file.get(), kRedoVolumeId, kRedoGeneration,
        [](uint64_t*) { return Status::IoError("no segment for seeds"); },
        [](uint64_t) {});
    ASSERT_TRUE(writer.StartChain(1, first_sequence).ok());
    uint64_t linked = 0;
    alloc::MetadataBatch small;
    small.Allocate(2);
    ASSERT_TRUE(writer.Append(small, &linked).ok());
    ASSERT_TRUE(writer.Append(FullBatch(), &linked).ok());
    alloc::MetadataBatch large;
    large.Put("big", std::string(5000, 'v'));  // a record of two blocks
    ASSERT_TRUE(writer.Append(large, &linked).ok());
    const std::vector<std::string> stripes = {
        "", SegmentPrefix(device.get(), 1, writer.position().offset_in_segment),
        "", ""};
    const alloc::RedoReplay replay = ReplayRedoSeed(stripes, 1, first_sequence);
    EXPECT_EQ(replay.batches, 3u);
    seeds["one_segment"] = JoinStripes(RedoParams(1, first_sequence), stripes);
  }
  // Two segments linked by a continue record. The writer links segments only
  // when one is full (2 MiB: too big for a seed), so this chain is encoded
  // from the table in alloc/redo_log.h; replaying it proves it right.
  {
    std::string link(8, '\0');
    coding::EncodeFixed64(link.data(), 3);
    alloc::MetadataBatch batch;
    batch.Allocate(3);
    const std::vector<std::string> stripes = {
        "", "",
        RedoSegmentHeader(0) + RedoRecord(1, 5, FullBatch().Encode()) +
            RedoRecord(2, 6, link),
        RedoSegmentHeader(1) + RedoRecord(1, 7, batch.Encode())};
    const alloc::RedoReplay replay = ReplayRedoSeed(stripes, 2, 5);
    EXPECT_EQ(replay.batches, 2u);
    EXPECT_EQ(replay.segments, (std::vector<uint64_t>{2, 3}));
    seeds["two_segments"] = JoinStripes(RedoParams(2, 5), stripes);
  }
}

// The parameters log_reader_fuzz.cc documents; its region id.
constexpr uint64_t kLogRegionId = 0x1234;

std::string LogParams(log::LogKind kind, uint64_t first_chain_index,
                      const std::vector<uint8_t>& segments) {
  std::string params(7, '\0');
  params[0] = static_cast<char>(static_cast<uint8_t>(kind) - 1);
  params[1] = static_cast<char>(segments.size());
  params[2] = static_cast<char>(first_chain_index);
  for (size_t i = 0; i < segments.size(); ++i) {
    params[3 + i] = static_cast<char>(segments[i]);
  }
  return params;
}

// A log segment: header, then `records` back to back, LSNs from `lsn`.
std::string LogSegment(log::LogKind kind, uint64_t chain_index, uint64_t nonce,
                       const std::vector<log::Record>& records) {
  log::SegmentHeader header;
  header.region_id = kLogRegionId;
  header.kind = kind;
  header.chain_index = chain_index;
  header.nonce = nonce;
  std::string segment(log::kSegmentHeaderBytes, '\0');
  log::EncodeSegmentHeader(header, segment.data());
  for (const log::Record& record : records) {
    std::string bytes(record.EncodedSize(), '\0');
    log::EncodeRecord(record, nonce, bytes.data());
    segment += bytes;
  }
  return segment;
}

log::Record MakeRecord(uint64_t lsn, log::RecordType type, std::string_view key,
                       std::string_view value) {
  log::Record record;
  record.lsn = lsn;
  record.type = type;
  record.key = key;
  record.value = value;
  return record;
}

size_t ReplayLogSeed(const std::vector<std::string>& stripes, log::LogKind kind,
                     const std::map<uint64_t, uint64_t>& segments) {
  FuzzDevice device(stripes.size() + 1);
  std::vector<Stripe> views;
  for (const std::string& stripe : stripes) {
    views.push_back({0, stripe});
  }
  device.Load(0, views);
  log::LogIdentity identity;
  identity.region_id = kLogRegionId;
  identity.kind = kind;
  size_t visits = 0;
  log::LogTail tail;
  std::unique_ptr<io::File> file = device.Open();
  EXPECT_TRUE(log::ReplayLog(
                  file.get(), identity, segments,
                  [&](const log::Record&, uint64_t, uint32_t) {
                    ++visits;
                    return Status::Ok();
                  },
                  &tail)
                  .ok());
  return visits;
}

void AddLogReaderSeeds(Corpus* corpus) {
  auto& seeds = (*corpus)["log_reader_fuzz"];
  const std::string key = KeyWithEdgeBytes("key");
  std::string position(8, '\0');
  coding::EncodeFixed64(position.data(), alloc::DeviceOffset(4, 4096 + 40));
  // A small (write-ahead) log of one segment, with a torn tail.
  {
    const log::LogKind kind = log::LogKind::kSmall;
    const std::vector<std::string> stripes = {
        "",
        LogSegment(kind, 4, 0x1111,
                   {MakeRecord(1, log::RecordType::kPut, key, "v1"),
                    MakeRecord(2, log::RecordType::kDelete, "other", ""),
                    MakeRecord(0, log::RecordType::kSyncMark, "", position),
                    MakeRecord(3, log::RecordType::kPut, "", "\xff")}) +
            std::string(13, '\x5a'),
        "", ""};
    EXPECT_EQ(ReplayLogSeed(stripes, kind, {{4, 1}}), 3u);
    seeds["one_segment"] = JoinStripes(LogParams(kind, 4, {1}), stripes);
  }
  // A medium log of two segments: the first ended, the second continuing.
  {
    const log::LogKind kind = log::LogKind::kMedium;
    const std::vector<std::string> stripes = {
        "", "",
        LogSegment(kind, 0, 0x2222,
                   {MakeRecord(1, log::RecordType::kPut, key, "first"),
                    MakeRecord(0, log::RecordType::kSegmentEnd, "", "")}),
        LogSegment(kind, 1, 0x3333,
                   {MakeRecord(2, log::RecordType::kPut, key, "second")})};
    EXPECT_EQ(ReplayLogSeed(stripes, kind, {{0, 2}, {1, 3}}), 2u);
    seeds["two_segments"] = JoinStripes(LogParams(kind, 0, {2, 3}), stripes);
  }
}

// --- Network decoders. ------------------------------------------------------

// Every valid message of the shared wire vectors (testdata/vectors/wire.txt).
void AddWireSeeds(Corpus* corpus) {
  auto& seeds = (*corpus)["messages_fuzz"];
  for (const auto& vector : LoadWireVectors()) {
    if (!vector.invalid) {
      seeds[vector.name] = vector.bytes;
    }
  }
}

// Fabric messages as they sit in a buffer, after the 4-byte sequence the
// target expects.
void AddMessageFormatSeeds(Corpus* corpus) {
  auto& seeds = (*corpus)["message_format_fuzz"];
  for (const size_t size : {size_t{0}, size_t{10}, size_t{200}}) {
    channel::MessageHeader header;
    header.kind = size == 0 ? channel::MessageKind::kReset
                            : channel::MessageKind::kRequest;
    header.sequence = 7;
    header.request_id = 42;
    std::string message(channel::MessageBytes(size), '\0');
    channel::EncodeMessage(header, std::string(size, 'p'), message.data());
    std::string seed(4, '\0');
    coding::EncodeFixed32(seed.data(), 7);
    seeds["payload_" + std::to_string(size)] = seed + message;
  }
}

// Fabric bootstrap challenges, with and without required proofs, and the
// Hellos of both kinds of connection.
void AddBootstrapAuthSeeds(Corpus* corpus) {
  auto& seeds = (*corpus)["bootstrap_auth_fuzz"];
  for (const bool required : {false, true}) {
    channel::Challenge challenge;
    challenge.client_proof_required = required;
    challenge.peer_proof_required = required;
    challenge.nonce = std::string(channel::kNonceBytes, required ? 'r' : 'o');
    seeds[required ? "proof_required" : "open"] =
        channel::EncodeChallenge(challenge);
  }
  channel::Challenge peers_only;
  peers_only.peer_proof_required = true;
  peers_only.nonce = std::string(channel::kNonceBytes, 'p');
  seeds["peer_proof_required"] = channel::EncodeChallenge(peers_only);
  for (const auto kind :
       {channel::ConnectionKind::kClient, channel::ConnectionKind::kPeer}) {
    channel::Hello hello;
    hello.provider = fabric::Provider::kTcp;
    hello.kind = kind;
    hello.address = "fi_sockaddr_in://127.0.0.1:4242";
    hello.reply_buffer = {4096, 7, 8192};
    hello.request_buffer_bytes = 8192;
    hello.nonce = std::string(channel::kNonceBytes, 'n');
    hello.proof = std::string(channel::kProofBytes, 'p');
    seeds[std::string("hello_") + channel::ConnectionKindName(kind)] =
        channel::EncodeHello(hello);
  }
}

// Replica-buffer records, control messages and replies.
void AddReplicationSeeds(Corpus* corpus) {
  auto& seeds = (*corpus)["replication_format_fuzz"];
  std::string records;
  replication::EncodeRecord({replication::RecordType::kPut, "key", "value", {}},
                            &records);
  replication::EncodeRecord({replication::RecordType::kDelete, "gone", "", {}},
                            &records);
  seeds["records"] = records;
  std::string flush;
  replication::EncodeControl(
      {replication::ControlType::kFlush, 7, 3, 1, 4096, 2, std::string()},
      &flush);
  seeds["flush"] = flush;
  std::string open;
  replication::Control opening{
      replication::ControlType::kOpen, 7, 3, 1, 0, 99, std::string()};
  opening.proof = replication::OpenProof(opening, std::string(32, 'k'),
                                         /*connection_id=*/5);
  replication::EncodeControl(opening, &open);
  seeds["open"] = open;
  std::string reply;
  replication::ControlReply opened;
  opened.buffers = {{1, 2, 3}, {4, 5, 6}};
  opened.copies = {{log::LogKind::kLarge, 17, 4, 4096, true}};
  opened.levels = {{1, 42}};
  replication::EncodeControlReply(opened, &reply);
  seeds["open_reply"] = reply;
  // Send-Index messages.
  replication::IndexControl flush_tail;
  flush_tail.type = replication::IndexControlType::kFlushTail;
  flush_tail.kind = log::LogKind::kLarge;
  flush_tail.sealed = true;
  flush_tail.bytes = 4096;
  flush_tail.chain_index = 3;
  flush_tail.primary_segment = 40;
  std::string encoded;
  replication::EncodeIndexControl(flush_tail, &encoded);
  seeds["flush_tail"] = encoded;
  replication::IndexControl install;
  install.type = replication::IndexControlType::kInstallLevel;
  install.level = 1;
  install.emptied = 0;
  install.descriptor.root = (7ull << 21) + 8192;
  install.descriptor.entries = 10;
  install.descriptor.index_segments = {7};
  encoded.clear();
  replication::EncodeIndexControl(install, &encoded);
  seeds["install_level"] = encoded;
  replication::IndexControl trim;
  trim.type = replication::IndexControlType::kTrim;
  trim.trimmed = {{log::LogKind::kMedium, 12, 2}};
  encoded.clear();
  replication::EncodeIndexControl(trim, &encoded);
  seeds["trim"] = encoded;
}

void AddIndexInstallerSeeds(Corpus* corpus) {
  auto& seeds = (*corpus)["index_installer_fuzz"];
  // A level built into segment 5, its value pointers in the large-log
  // segments the target's backup holds copies of.
  TreeEntriesOptions options;
  options.count = 300;
  const TreeEntries entries = RandomTreeEntries(9, options);
  MemoryNodeStore store(/*first_segment=*/5);
  uint64_t root = 0;
  ASSERT_TRUE(BuildTree(entries, &store, &root).ok());
  uint64_t end = 0;
  for (const MemoryNodeStore::WrittenNode& node : store.written()) {
    ASSERT_EQ(alloc::SegmentOf(node.offset), 5u);
    end = std::max<uint64_t>(end,
                             alloc::OffsetInSegment(node.offset) + node.size);
  }
  std::string segment;
  ASSERT_TRUE(store.Read(alloc::DeviceOffset(5, 0), end, &segment).ok());
  lsm::LevelDescriptor level;
  level.root = root;
  level.entries = entries.size();
  level.index_segments = {5};
  const std::string descriptor = level.Encode();
  std::string input;
  coding::PutFixed16(&input, static_cast<uint16_t>(descriptor.size()));
  seeds["level"] = input + descriptor + segment;
}

Corpus MakeSeeds() {
  Corpus corpus;
  AddSuperblockSeeds(&corpus);
  AddMetadataBatchSeeds(&corpus);
  AddCheckpointSeeds(&corpus);
  AddLevelDescriptorSeeds(&corpus);
  AddKeyBoundsSeeds(&corpus);
  AddLogFormatSeeds(&corpus);
  AddNodeSeeds(&corpus);
  AddBloomFilterSeeds(&corpus);
  AddRedoLogSeeds(&corpus);
  AddLogReaderSeeds(&corpus);
  AddWireSeeds(&corpus);
  AddMessageFormatSeeds(&corpus);
  AddBootstrapAuthSeeds(&corpus);
  AddReplicationSeeds(&corpus);
  AddIndexInstallerSeeds(&corpus);
  return corpus;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

TEST(FuzzSeeds, CommittedSeedsAreCurrent) {
  const Corpus corpus = MakeSeeds();
  const fs::path root = KVS_FUZZ_CORPUS_DIR;
  if (std::getenv("KVS_UPDATE_FUZZ_SEEDS") != nullptr) {
    for (const auto& [target, seeds] : corpus) {
      fs::remove_all(root / target);
      fs::create_directories(root / target);
      for (const auto& [name, bytes] : seeds) {
        std::ofstream(root / target / name, std::ios::binary) << bytes;
      }
    }
    GTEST_SKIP() << "rewrote the seed corpus under " << root;
  }
  const std::string hint =
      "; the seed corpus is stale: rewrite it with KVS_UPDATE_FUZZ_SEEDS=1 "
      "ctest --test-dir <build> -R FuzzSeeds";
  for (const auto& [target, seeds] : corpus) {
    std::set<std::string> committed;
    if (fs::is_directory(root / target)) {
      for (const auto& entry : fs::directory_iterator(root / target)) {
        committed.insert(entry.path().filename().string());
      }
    }
    for (const auto& [name, bytes] : seeds) {
      EXPECT_TRUE(committed.erase(name) == 1)
          << target << "/" << name << " is missing" << hint;
      EXPECT_TRUE(ReadFile(root / target / name) == bytes)
          << target << "/" << name << " differs" << hint;
    }
    for (const std::string& name : committed) {
      ADD_FAILURE() << target << "/" << name << " is not made here" << hint;
    }
  }
}

}  // namespace
}  // namespace kvs::testing
