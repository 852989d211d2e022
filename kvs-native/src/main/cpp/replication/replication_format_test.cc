#include "replication/replication_format.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kvs::replication {
namespace {

TEST(ReplicationFormat, RecordsRoundTripAndDamageIsFound) {
  std::string bytes;
  EncodeRecord({RecordType::kPut, "key", "value", {}}, &bytes);
  EncodeRecord({RecordType::kDelete, "gone", "", {}}, &bytes);
  EncodeRecord(
      {RecordType::kPut, std::string(4096, 'k'), std::string(1 << 20, 'v'), {}},
      &bytes);
  std::vector<Record> records;
  ASSERT_TRUE(DecodeRecords(bytes, &records).ok());
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].key, "key");
  EXPECT_EQ(records[0].value, "value");
  EXPECT_EQ(records[1].type, RecordType::kDelete);
  EXPECT_EQ(records[2].value.size(), size_t{1} << 20);
  EXPECT_EQ(ValidPrefix(bytes), bytes.size());
  // A zeroed tail (a buffer not filled to its end) ends the valid prefix.
  const size_t first = RecordBytes({RecordType::kPut, "key", "value", {}});
  std::string partial = bytes.substr(0, first) + std::string(100, '\0');
  EXPECT_EQ(ValidPrefix(partial), first);
  // A flipped bit is found: by DecodeRecords as an error, by ValidPrefix
  // as the end.
  std::string damaged = bytes;
  damaged[first + 9] ^= 0x10;
  records.clear();
  const Status status = DecodeRecords(damaged, &records);
  EXPECT_TRUE(status.IsCorruption());
  EXPECT_NE(status.message().find(std::to_string(first)), std::string::npos);
  EXPECT_EQ(ValidPrefix(damaged), first);
}

// An atomic batch is records flagged to go on, then one that is not: whole,
// it decodes with its flags; cut anywhere inside, ValidPrefix (what a
// promoted backup applies of a buffer nobody flushed) ends before it.
TEST(ReplicationFormat, ABatchIsValidOnlyWhole) {
  std::string bytes;
  EncodeRecord({RecordType::kPut, "single", "1", {}}, &bytes);
  const size_t before_batch = bytes.size();
  Record first{RecordType::kPut, "a", "2", {}};
  first.continues_batch = true;
  Record second{RecordType::kDelete, "b", "", {}};
  second.continues_batch = true;
  EncodeRecord(first, &bytes);
  EncodeRecord(second, &bytes);
  const size_t before_last = bytes.size();
  EncodeRecord({RecordType::kPut, "c", "3", {}}, &bytes);
  std::vector<Record> records;
  ASSERT_TRUE(DecodeRecords(bytes, &records).ok());
  ASSERT_EQ(records.size(), 4u);
  EXPECT_FALSE(records[0].continues_batch);
  EXPECT_TRUE(records[1].continues_batch);
  EXPECT_TRUE(records[2].continues_batch);
  EXPECT_FALSE(records[3].continues_batch);
  EXPECT_EQ(ValidPrefix(bytes), bytes.size());
  for (size_t cut = before_batch; cut < bytes.size(); ++cut) {
    EXPECT_EQ(ValidPrefix(bytes.substr(0, cut) + std::string(64, '\0')),
              before_batch)
        << cut;
  }
  EXPECT_EQ(ValidPrefix(bytes.substr(0, before_last)), before_batch);
}

TEST(ReplicationFormat, ControlMessagesAndRepliesRoundTrip) {
  std::string bytes;
  EncodeControl({ControlType::kFlush, 7, 3, 1, 12345, 9, std::string()},
                &bytes);
  EXPECT_TRUE(IsControl(bytes));
  Control control;
  ASSERT_TRUE(DecodeControl(bytes, &control).ok());
  EXPECT_EQ(control.region_id, 7u);
  EXPECT_EQ(control.epoch, 3u);
  EXPECT_EQ(control.buffer, 1u);
  EXPECT_EQ(control.bytes, 12345u);
  EXPECT_EQ(control.sequence, 9u);
  // A FLUSH naming no buffer, and client requests, are not control.
  std::string bad;
  EncodeControl({ControlType::kFlush, 7, 3, 2, 0, 0, std::string()}, &bad);
  EXPECT_FALSE(DecodeControl(bad, &control).ok());
  EXPECT_FALSE(IsControl(std::string("\x01\x01\0\0", 4)));

  std::string reply;
  ControlReply opened;
  opened.buffers = {{1, 2, 3}, {4, 5, 6}};
  opened.copies = {{log::LogKind::kLarge, 17, 4, 4096, true},
                   {log::LogKind::kMedium, 9, 0, 2u << 20, false}};
  opened.levels = {{2, 0xfeedull}};
  EncodeControlReply(opened, &reply);
  ControlReply decoded;
  ASSERT_TRUE(DecodeControlReply(reply, &decoded).ok());
  ASSERT_EQ(decoded.buffers.size(), 2u);
  EXPECT_EQ(decoded.buffers[1].key, 5u);
  ASSERT_EQ(decoded.copies.size(), 2u);
  EXPECT_EQ(decoded.copies[0].kind, log::LogKind::kLarge);
  EXPECT_EQ(decoded.copies[0].primary_segment, 17u);
  EXPECT_EQ(decoded.copies[0].chain_index, 4u);
  EXPECT_EQ(decoded.copies[0].bytes, 4096u);
  EXPECT_TRUE(decoded.copies[0].sealed);
  EXPECT_FALSE(decoded.copies[1].sealed);
  ASSERT_EQ(decoded.levels.size(), 1u);
  EXPECT_EQ(decoded.levels[0].level, 2u);
  EXPECT_EQ(decoded.levels[0].primary_hash, 0xfeedull);
  // A count that does not match the bytes, or a bad kind, is refused.
  for (const size_t at : {size_t{8}, size_t{8 + 16 + 48}}) {
    std::string damaged = reply;
    damaged[at] = 9;
    decoded = {};
    EXPECT_FALSE(DecodeControlReply(damaged, &decoded).ok()) << at;
  }
  reply.clear();
  ControlReply refused;
  refused.status = Status::FromCode(Status::Code::kStaleEpoch, "epoch 4 here");
  EncodeControlReply(refused, &reply);
  decoded = {};
  ASSERT_TRUE(DecodeControlReply(reply, &decoded).ok());
  EXPECT_EQ(decoded.status.code(), Status::Code::kStaleEpoch);
  EXPECT_EQ(decoded.status.message(), "epoch 4 here");
}

// An OPEN carries the proof of the region's stream key, bound to the
// connection it is sent on: only the group's primary (which holds the key)
// can make one, and it is good on that connection alone.
TEST(ReplicationFormat, AnOpenProvesTheStreamKeyOnItsConnection) {
  const std::string key(32, 'k');
  Control open{ControlType::kOpen, 7, 3, 1, 0, 42, std::string()};
  open.proof = OpenProof(open, key, /*connection_id=*/11);
  std::string bytes;
  EncodeControl(open, &bytes);
  ASSERT_EQ(bytes.size(), kOpenControlBytes);
  Control decoded;
  ASSERT_TRUE(DecodeControl(bytes, &decoded).ok());
  EXPECT_TRUE(VerifyOpen(decoded, key, 11));
  EXPECT_FALSE(VerifyOpen(decoded, key, 12));  // replayed on another
  EXPECT_FALSE(VerifyOpen(decoded, std::string(32, 'x'), 11));
  EXPECT_FALSE(VerifyOpen(decoded, "", 11));  // no key: nothing proves it
  Control later_epoch = decoded;
  later_epoch.epoch = 4;
  EXPECT_FALSE(VerifyOpen(later_epoch, key, 11));
  // An OPEN without its proof, or a FLUSH with one, is not a message.
  EXPECT_FALSE(DecodeControl(bytes.substr(0, kControlBytes), &decoded).ok());
  std::string flush;
  EncodeControl({ControlType::kFlush, 7, 3, 1, 0, 0, std::string()}, &flush);
  EXPECT_FALSE(DecodeControl(flush + std::string(32, '\0'), &decoded).ok());
}

}  // namespace
}  // namespace kvs::replication
