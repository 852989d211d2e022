#include "lsm/write_ids.h"

#include <gtest/gtest.h>

#include <string>

#include "log/log_format.h"

namespace kvs::lsm {
namespace {

TEST(WriteIdsTest, RemembersWhatEachIdWroteAndForgetsTheOldestPastItsCapacity) {
  WriteIds ids(3);
  EXPECT_EQ(ids.horizon(), 0u);
  ids.Record({1, 1}, 10, false, std::string(8, 'a'));
  ids.Record({1, 2}, 11, true, {});
  ids.Record({2, 1}, 12, false, "a longer value");
  ids.Record({}, 13, false, "no id: not kept");
  ASSERT_TRUE(ids.Find({1, 1}).has_value());
  EXPECT_EQ(ids.Find({1, 1})->lsn, 10u);
  EXPECT_EQ(ids.Find({1, 1})->small_value, std::string(8, 'a'));
  EXPECT_TRUE(ids.Find({1, 2})->deleted);
  EXPECT_TRUE(ids.Find({2, 1})->small_value.empty());  // not a counter
  EXPECT_EQ(ids.size(), 3u);
  // A fourth: the oldest goes, and the horizon says so.
  ids.Record({3, 1}, 14, false, {});
  EXPECT_FALSE(ids.Find({1, 1}).has_value());
  EXPECT_EQ(ids.horizon(), 10u);
  EXPECT_EQ(ids.size(), 3u);
  ids.Reset(20);
  EXPECT_EQ(ids.size(), 0u);
  EXPECT_EQ(ids.horizon(), 20u);
}

TEST(WriteIdsTest, AnIdRecordedAgainIsForgottenAtItsLaterLsn) {
  WriteIds ids(1);
  ids.Record({1, 1}, 10, false, {});
  ids.Record({1, 1}, 20, false, {});  // replayed again, say
  EXPECT_EQ(ids.Find({1, 1})->lsn, 20u);
  EXPECT_EQ(ids.horizon(), 0u);
  ids.Record({2, 1}, 30, false, {});
  EXPECT_FALSE(ids.Find({1, 1}).has_value());
  EXPECT_TRUE(ids.Find({2, 1}).has_value());
  EXPECT_EQ(ids.horizon(), 20u);
  EXPECT_EQ(ids.size(), 1u);
}

TEST(WriteIdsTest, LogRecordsCarryAWriteIdThroughTheirChecksum) {
  const log::Record record{
      5, log::RecordType::kPut, "key", "value", {0x1234, 9}};
  std::string bytes(record.EncodedSize(), '\0');
  log::EncodeRecord(record, /*nonce=*/77, bytes.data());
  EXPECT_EQ(bytes.size(), log::kRecordHeaderBytes + 3 + 5 + log::kWriteIdBytes);
  log::Record decoded;
  size_t size = 0;
  ASSERT_TRUE(log::DecodeRecord(bytes, 77, &decoded, &size));
  EXPECT_EQ(size, bytes.size());
  EXPECT_EQ(decoded.value, "value");
  EXPECT_TRUE(decoded.write_id == (log::WriteId{0x1234, 9}));
  // The id is covered by the checksum; an unknown flag is refused.
  std::string damaged = bytes;
  damaged[damaged.size() - 1] ^= 1;
  EXPECT_FALSE(log::DecodeRecord(damaged, 77, &decoded, &size));
  std::string flagged = bytes;
  flagged[19] = 2;
  EXPECT_FALSE(log::DecodeRecord(flagged, 77, &decoded, &size));
  // Without an id, a record is as it always was.
  const log::Record plain{6, log::RecordType::kDelete, "key", {}, {}};
  EXPECT_EQ(plain.EncodedSize(), log::kRecordHeaderBytes + 3);
}

}  // namespace
}  // namespace kvs::lsm
