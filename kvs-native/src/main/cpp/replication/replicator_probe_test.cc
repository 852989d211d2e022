// The watchdog's probe of the replication thread (Replicator::Probe): it is
// answered while the thread comes round its loop, idle or not, and not
// while a turn is stuck (here: in a write's callback that does not return,
// as the thread stood in the self-deadlock of 44d2127).

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "replication/replication_format.h"
#include "replication/replicator.h"
#include "testing/eventually.h"
#include "testing/silent_port.h"

namespace kvs::replication {
namespace {

using std::chrono::milliseconds;

constexpr uint64_t kRegion = 9;

ReplicatorOptions Options() {
  ReplicatorOptions options;
  options.endpoint.provider = fabric::Provider::kTcp;
  options.endpoint.node = "127.0.0.1";
  options.timeout = milliseconds(300);
  options.stall_timeout = milliseconds(200);
  return options;
}

TEST(ReplicatorProbeTest, AnIdleReplicationThreadAnswersEveryProbe) {
  Replicator replicator(Options());
  // The first probe has nothing to answer (it may find the lock taken:
  // the thread's loop takes it too).
  EXPECT_TRUE(testing::Eventually([&] { return replicator.Probe(); }));
  for (int round = 0; round < 3; ++round) {
    EXPECT_TRUE(testing::Eventually([&] { return replicator.Probe(); }))
        << round;
  }
}

TEST(ReplicatorProbeTest, AThreadStuckInATurnAnswersNoProbeUntilItComesRound) {
  testing::SilentPort backup;
  Replicator replicator(Options());
  ASSERT_TRUE(testing::Eventually([&] { return replicator.Probe(); }));
  replicator.Open(kRegion, 1, {{"127.0.0.1", backup.port()}},
                  ReplicationMode::kBuildIndex);
  std::mutex mutex;
  std::condition_variable changed;
  bool entered = false;
  bool released = false;
  replicator.Write(
      kRegion, {RecordType::kPut, "key", "value", {}}, /*region=*/nullptr,
      [] { return Status::Ok(); },
      [&](Status) {
        // The outcome (the backup never held it) comes on the replication
        // thread, which stays here until released.
        std::unique_lock<std::mutex> lock(mutex);
        entered = true;
        changed.notify_all();
        changed.wait(lock, [&] { return released; });
      });
  {
    std::unique_lock<std::mutex> lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, std::chrono::seconds(10),
                                 [&] { return entered; }));
  }
  (void)replicator.Probe();  // may be answered: asked before it got stuck
  for (int round = 0; round < 5; ++round) {
    std::this_thread::sleep_for(milliseconds(150));  // > its 100 ms idle wait
    EXPECT_FALSE(replicator.Probe()) << "round " << round;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    released = true;
    changed.notify_all();
  }
  EXPECT_TRUE(testing::Eventually([&] { return replicator.Probe(); }));
}

}  // namespace
}  // namespace kvs::replication
