#include "replication/replica_digest.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "testing/log_segments.h"
#include "testing/memory_device.h"
#include "util/limits.h"

namespace kvs::replication {
namespace {

using testing::LogSegment;
constexpr log::LogKind kSmall = log::LogKind::kSmall;
constexpr log::LogKind kLarge = log::LogKind::kLarge;

// The digest of `pairs` (key to value) as every replica computes it.
uint64_t DigestOf(const std::map<std::string, std::string>& pairs) {
  PairDigest digest;
  for (const auto& [key, value] : pairs) {
    digest.Add(PairDigest::Hash(key, value));
  }
  return digest.digest();
}

// A replica without levels: the copies of a primary's small and large logs
// and what landed in their buffers.
class ReplicaDigestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = testing::MemoryDevice::Create(64 * limits::segment_size_bytes);
    ASSERT_TRUE(alloc::Volume::Create(device_->Open(), {}, &volume_).ok());
    ASSERT_TRUE(LogMirror::Open(volume_.get(), 5, kSmall, &small_).ok());
    ASSERT_TRUE(LogMirror::Open(volume_.get(), 5, kLarge, &large_).ok());
  }

  void Copy(log::LogKind kind, uint64_t primary, uint64_t chain_index,
            const LogSegment& segment, bool sealed) {
    LogMirror* mirror = kind == kSmall ? small_.get() : large_.get();
    ASSERT_TRUE(
        mirror->Persist(primary, chain_index, segment.bytes(), sealed).ok());
  }

  // Digests the replica as it stands, with `landed` buffers.
  Status Digest(
      uint64_t compacted_lsn, ContentsDigest* digest,
      const std::vector<std::pair<log::LogKind, LogSegment>>& landed = {}) {
    ReplicaSnapshot snapshot;
    snapshot.compacted_lsn = compacted_lsn;
    snapshot.small_copies = small_->segments();
    snapshot.large_copies = large_->segments();
    std::vector<uint64_t> segments;
    for (const auto* copies :
         {&snapshot.small_copies, &snapshot.large_copies}) {
      for (const auto& [primary, copy] : *copies) {
        segments.push_back(copy.backup_segment);
      }
    }
    snapshot.Pin(volume_.get(), segments);
    for (const auto& [kind, segment] : landed) {
      std::string buffer = segment.bytes();
      buffer.resize(limits::segment_size_bytes, '\0');
      snapshot.AddLanded(kind, buffer);
    }
    return DigestReplica(snapshot, {}, digest);
  }

  std::shared_ptr<testing::MemoryDevice> device_;
  std::unique_ptr<alloc::Volume> volume_;
  std::unique_ptr<LogMirror> small_, large_;
};

TEST_F(ReplicaDigestTest, RecordsOfBothLogsReplayInLsnOrderNewestWins) {
  const std::string big(2000, 'L');
  Copy(kSmall, 40, 0,
       LogSegment(kSmall, 0, 1).Put(1, "a", "1").Put(3, "b", "2").End(), true);
  Copy(kSmall, 41, 1, LogSegment(kSmall, 1, 2).Delete(5, "a").Put(6, "c", "3"),
       false);
  Copy(kLarge, 50, 0,
       LogSegment(kLarge, 0, 3).Put(2, "a", big).Put(4, "d", big), false);
  ContentsDigest digest;
  const Status status = Digest(0, &digest);
  ASSERT_TRUE(status.ok()) << status.ToString();
  // a: put 1, put (large) 2, deleted 5; b: 3; c: 6; d: 4 (large).
  EXPECT_EQ(digest.digest, DigestOf({{"b", "2"}, {"c", "3"}, {"d", big}}));
  EXPECT_EQ(digest.pairs, 3u);
  EXPECT_EQ(digest.past_levels, 6u);
  EXPECT_EQ(digest.last_lsn, 6u);
  EXPECT_EQ(digest.dropped, 0u);
  EXPECT_EQ(digest.level_pairs, 0u);
  EXPECT_EQ(digest.levels, 0u);

  // Past a compacted LSN only: what the levels would hold (none here).
  ASSERT_TRUE(Digest(3, &digest).ok());
  EXPECT_EQ(digest.digest, DigestOf({{"c", "3"}, {"d", big}}));
  EXPECT_EQ(digest.past_levels, 3u);
  EXPECT_EQ(digest.compacted_lsn, 3u);
  EXPECT_EQ(digest.last_lsn, 6u);
}

TEST_F(ReplicaDigestTest, ReplayStopsAtTheFirstLsnMissingFromBothLogs) {
  Copy(kSmall, 40, 0,
       LogSegment(kSmall, 0, 1)
           .Put(1, "a", "1")
           .Put(2, "b", "2")
           .Put(4, "c", "4"),
       false);
  Copy(kLarge, 50, 0, LogSegment(kLarge, 0, 3).Put(5, "d", "5"), false);
  ContentsDigest digest;
  ASSERT_TRUE(Digest(0, &digest).ok());
  // LSN 3 is missing: 4 and 5 were acknowledged after a lost write.
  EXPECT_EQ(digest.digest, DigestOf({{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(digest.past_levels, 2u);
  EXPECT_EQ(digest.dropped, 2u);
  EXPECT_EQ(digest.last_lsn, 2u);
}

TEST_F(ReplicaDigestTest, WhatLandedInTheBuffersCountsAsAPromotionTakesIt) {
  LogSegment tail(kSmall, 1, 2);
  tail.Put(2, "b", "2");
  Copy(kSmall, 40, 0, LogSegment(kSmall, 0, 1).Put(1, "a", "1").End(), true);
  Copy(kSmall, 41, 1, tail, false);
  tail.Put(3, "c", "3").Delete(4, "a");
  ContentsDigest digest;
  ASSERT_TRUE(Digest(0, &digest, {{kSmall, tail}}).ok());
  EXPECT_EQ(digest.digest, DigestOf({{"b", "2"}, {"c", "3"}}));
  EXPECT_EQ(digest.last_lsn, 4u);
  // Without the buffer, the copies alone.
  ASSERT_TRUE(Digest(0, &digest).ok());
  EXPECT_EQ(digest.digest, DigestOf({{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(digest.last_lsn, 2u);
  // A segment past the tail was never acknowledged: not replayed.
  Copy(kSmall, 42, 2, LogSegment(kSmall, 2, 4).Put(3, "z", "9"), false);
  ASSERT_TRUE(Digest(0, &digest).ok());
  EXPECT_EQ(digest.digest, DigestOf({{"a", "1"}, {"b", "2"}}));
}

TEST_F(ReplicaDigestTest, AnLsnTwiceIsCorruptionAsRecoveryWouldSay) {
  Copy(kSmall, 40, 0, LogSegment(kSmall, 0, 1).Put(1, "a", "1"), false);
  Copy(kLarge, 50, 0, LogSegment(kLarge, 0, 3).Put(1, "b", "2"), false);
  ContentsDigest digest;
  EXPECT_TRUE(Digest(0, &digest).IsCorruption());
}

}  // namespace
}  // namespace kvs::replication
