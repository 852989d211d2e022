// A stream's queue is bounded (ReplicatorOptions::stream_queued_bytes_max):
// writes to a region whose backup takes nothing (it accepts the connection
// and never answers) fail that backup's stream once more than the bound is
// queued for it, instead of queueing without end.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "replication/replication_format.h"
#include "replication/replicator.h"
#include "testing/silent_port.h"

namespace kvs::replication {
namespace {

constexpr uint64_t kRegion = 7;
constexpr uint64_t kBoundBytes = 64u << 10;

ReplicatorOptions Options() {
  ReplicatorOptions options;
  options.endpoint.provider = fabric::Provider::kTcp;
  options.endpoint.node = "127.0.0.1";
  options.timeout = std::chrono::milliseconds(500);
  options.stream_queued_bytes_max = kBoundBytes;
  return options;
}

TEST(StreamQueueTest, ABuildIndexStreamFailsBeyondItsBound) {
  testing::SilentPort backup;
  std::atomic<size_t> answered{0};
  size_t writes = 0;
  {
    Replicator replicator(Options());
    replicator.Open(kRegion, 1, {{"127.0.0.1", backup.port()}},
                    ReplicationMode::kBuildIndex);
    // Four times the bound, written before the connection could time out
    // (2 s): were the queue unbounded, all of it would wait there.
    const std::string value(1000, 'v');
    std::string encoded;
    EncodeRecord({RecordType::kPut, "key", value, {}}, &encoded);
    writes = 4 * kBoundBytes / encoded.size();
    for (size_t i = 0; i < writes; ++i) {
      const std::string key = "key" + std::to_string(i);
      replicator.Write(
          kRegion, {RecordType::kPut, key, value, {}}, /*region=*/nullptr,
          [] { return Status::Ok(); },
          [&answered](Status) { answered.fetch_add(1); });
    }
    const std::vector<BackupLag> lags = replicator.BackupLags(kRegion);
    ASSERT_EQ(lags.size(), 1u);
    EXPECT_LE(lags[0].queued_bytes, kBoundBytes + encoded.size() + 16)
        << "the stream kept queueing past its bound";
    const std::vector<std::string> why = replicator.BackupFailures(kRegion);
    ASSERT_EQ(why.size(), 1u);
    EXPECT_NE(why[0].find("bytes queued for it"), std::string::npos)
        << "failure: '" << why[0] << "'";
    EXPECT_EQ(replicator.BackupStates(kRegion),
              std::vector<BackupState>{BackupState::kFailed});
  }
  // Every write got its outcome (IO_ERROR: the backup never held it) by
  // the time the replicator closed.
  EXPECT_EQ(answered.load(), writes);
}

}  // namespace
}  // namespace kvs::replication
