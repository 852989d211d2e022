#include "replication/replica_chain.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "alloc/device_offset.h"
#include "testing/log_segments.h"
#include "testing/memory_device.h"
#include "util/limits.h"

namespace kvs::replication {
namespace {

using testing::LogSegment;
constexpr log::LogKind kSmall = log::LogKind::kSmall;

class ReplicaChainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = testing::MemoryDevice::Create(64 * limits::segment_size_bytes);
    ASSERT_TRUE(alloc::Volume::Create(device_->Open(), {}, &volume_).ok());
    ASSERT_TRUE(LogMirror::Open(volume_.get(), 5, kSmall, &mirror_).ok());
  }

  // Persists `segment` as the copy of primary segment `primary`.
  void Copy(uint64_t primary, uint64_t chain_index, const LogSegment& segment,
            bool sealed) {
    ASSERT_TRUE(
        mirror_->Persist(primary, chain_index, segment.bytes(), sealed).ok());
  }

  // A landed buffer: the segment's bytes, then zeros to the buffer's end.
  void Land(const LogSegment& segment) {
    buffers_.push_back(std::make_unique<std::string>(segment.bytes()));
    buffers_.back()->resize(limits::segment_size_bytes, '\0');
    landed_.push_back({kSmall, *buffers_.back()});
  }

  std::map<uint64_t, ChainPosition> Plan() {
    std::map<uint64_t, ChainPosition> chain;
    const Status status = PlanReplicaChain(
        volume_->file(), kSmall, mirror_->segments(), landed_, &chain);
    EXPECT_TRUE(status.ok()) << status.ToString();
    return chain;
  }

  std::string Read(const ChainPosition& position) {
    std::string bytes;
    const Status status =
        ReadChainPosition(volume_->file(), position, landed_, &bytes);
    EXPECT_TRUE(status.ok()) << status.ToString();
    return bytes;
  }

  std::shared_ptr<testing::MemoryDevice> device_;
  std::unique_ptr<alloc::Volume> volume_;
  std::unique_ptr<LogMirror> mirror_;
  std::vector<std::unique_ptr<std::string>> buffers_;
  std::vector<LandedLog> landed_;
};

TEST_F(ReplicaChainTest, WalkStopsAtTheFirstBadRecordOrTheEndRecord) {
  LogSegment segment(kSmall, 0, 77);
  segment.Put(1, "a", "1").Delete(2, "b").Put(3, "c", "333");
  const SegmentWalk walk = WalkSegment(segment.bytes());
  EXPECT_TRUE(walk.header_valid);
  EXPECT_EQ(walk.end, segment.bytes().size());
  EXPECT_FALSE(walk.ended);
  EXPECT_EQ(walk.max_lsn, 3u);
  // A torn last record: the walk ends before it.
  const std::string torn = segment.bytes().substr(0, walk.end - 1);
  EXPECT_LT(WalkSegment(torn).end, torn.size());
  segment.End().Put(4, "after", "the end");
  EXPECT_TRUE(WalkSegment(segment.bytes()).ended);
  EXPECT_LT(WalkSegment(segment.bytes()).end, segment.bytes().size());
  EXPECT_FALSE(WalkSegment(std::string(8192, 'x')).header_valid);
}

TEST_F(ReplicaChainTest, TheChainIsKeptUpToItsTail) {
  Copy(40, 0, LogSegment(kSmall, 0, 1).Put(1, "a", "1").End(), true);
  Copy(41, 1, LogSegment(kSmall, 1, 2).Put(2, "b", "2"), false);  // the tail
  Copy(42, 2, LogSegment(kSmall, 2, 3).Put(3, "c", "3").End(), true);
  const auto chain = Plan();
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_TRUE(chain.at(0).kept);
  EXPECT_FALSE(chain.at(0).tail);
  EXPECT_TRUE(chain.at(1).kept);
  EXPECT_TRUE(chain.at(1).tail);
  // Past the tail: never acknowledged.
  EXPECT_FALSE(chain.at(2).kept);
  EXPECT_EQ(chain.at(1).primary_segment, 41u);
  EXPECT_FALSE(chain.at(1).buffer.has_value());
}

// A sealed copy is walked when it is persisted, and a promotion plans it
// from that walk, reading back only its header block: a promotion of a
// region with a long log no longer reads every copy whole (3.4 s for 90
// segments in the session-7 chaos profile). Bytes past the header that
// changed on the device since are not read, so the plan still says what
// the walk found.
TEST_F(ReplicaChainTest, ASealedCopyIsPlannedFromItsWalkNotReadBack) {
  LogSegment sealed(kSmall, 0, 1);
  sealed.Put(1, "a", std::string(3000, 'v')).Delete(2, "b").Put(3, "c", "3");
  sealed.End();
  const SegmentWalk expected = WalkSegment(sealed.bytes());
  Copy(40, 0, sealed, true);
  Copy(41, 1, LogSegment(kSmall, 1, 2).Put(4, "d", "4"), false);
  const MirroredSegment copy = mirror_->segments().at(40);
  ASSERT_TRUE(copy.walk.has_value());
  EXPECT_EQ(copy.walk->end, expected.end);
  EXPECT_TRUE(copy.walk->ended);
  EXPECT_EQ(copy.walk->put_bytes, expected.put_bytes);
  EXPECT_EQ(copy.walk->max_lsn, 3u);
  EXPECT_FALSE(mirror_->segments().at(41).walk.has_value());
  // The walk survives a reopen of the map.
  mirror_.reset();
  ASSERT_TRUE(LogMirror::Open(volume_.get(), 5, kSmall, &mirror_).ok());
  ASSERT_TRUE(mirror_->segments().at(40).walk.has_value());
  // Zeros over the copy's records: a plan that read them would find the
  // walk ending at the header.
  const std::string zeros(limits::io_alignment_bytes, '\0');
  ASSERT_TRUE(volume_->file()
                  ->Write(alloc::SegmentStart(copy.backup_segment) +
                              log::kSegmentHeaderBytes,
                          zeros)
                  .ok());
  const auto chain = Plan();
  ASSERT_EQ(chain.size(), 2u);
  EXPECT_TRUE(chain.at(0).walk.header_valid);
  EXPECT_EQ(chain.at(0).walk.end, expected.end);
  EXPECT_TRUE(chain.at(0).walk.ended);
  EXPECT_EQ(chain.at(0).walk.max_lsn, 3u);
  EXPECT_TRUE(chain.at(0).kept);
  EXPECT_FALSE(chain.at(0).tail);
  EXPECT_TRUE(chain.at(1).tail);
}

TEST_F(ReplicaChainTest, ALandedBufferWithMoreRecordsSupersedesTheCopy) {
  LogSegment tail(kSmall, 1, 9);
  tail.Put(2, "b", "2");
  Copy(40, 0, LogSegment(kSmall, 0, 1).Put(1, "a", "1").End(), true);
  Copy(41, 1, tail, false);
  tail.Put(3, "c", "3").Put(4, "d", "4");
  Land(tail);
  // A stale buffer of position 0 (fewer records than the copy) loses.
  Land(LogSegment(kSmall, 0, 1));
  auto chain = Plan();
  ASSERT_EQ(chain.at(1).buffer, 0u);
  EXPECT_FALSE(chain.at(0).buffer.has_value());
  EXPECT_EQ(Read(chain.at(1)), tail.bytes());
  EXPECT_EQ(chain.at(1).walk.max_lsn, 4u);

  // Bytes of another use of the segment (another nonce) win even when
  // shorter; and a position only a buffer holds joins the chain.
  landed_.clear();
  buffers_.clear();
  Land(LogSegment(kSmall, 1, 10).End());
  Land(LogSegment(kSmall, 2, 11).Put(8, "y", "8"));
  chain = Plan();
  EXPECT_EQ(chain.at(1).walk.header.nonce, 10u);
  EXPECT_LT(chain.at(1).walk.end, tail.bytes().size());
  EXPECT_TRUE(chain.at(1).kept);
  EXPECT_TRUE(chain.at(2).kept);
  EXPECT_TRUE(chain.at(2).tail);
  EXPECT_EQ(chain.at(2).buffer, 1u);
}

TEST_F(ReplicaChainTest, BytesWithoutAValidHeaderOfTheirPositionHoldNothing) {
  Copy(40, 0, LogSegment(kSmall, 0, 1).Put(1, "a", "1").End(), true);
  // Position 1's copy claims to be position 5.
  Copy(41, 1, LogSegment(kSmall, 5, 2).Put(2, "b", "2").End(), true);
  Copy(42, 2, LogSegment(kSmall, 2, 3).Put(3, "c", "3"), false);
  const auto chain = Plan();
  EXPECT_TRUE(chain.at(0).kept);
  EXPECT_FALSE(chain.at(1).kept);
  EXPECT_TRUE(chain.at(2).kept);
}

TEST_F(ReplicaChainTest, TwoCopiesOfOnePositionAreCorruption) {
  Copy(40, 0, LogSegment(kSmall, 0, 1).Put(1, "a", "1").End(), true);
  Copy(41, 0, LogSegment(kSmall, 0, 2).Put(2, "b", "2").End(), true);
  std::map<uint64_t, ChainPosition> chain;
  EXPECT_TRUE(PlanReplicaChain(volume_->file(), kSmall, mirror_->segments(),
                               landed_, &chain)
                  .IsCorruption());
}

}  // namespace
}  // namespace kvs::replication
