// The watchdog's probe of the replication thread (Replicator::Probe): it is
// answered while the thread comes round its loop, idle or not, and not
// while a turn is stuck (here: in a write's callback that does not return,
// as the thread stood in the self-deadlock of 44d2127).

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "channel/bootstrap.h"
#include "replication/replication_format.h"
#include "replication/replicator.h"

namespace kvs::replication {
namespace {

using std::chrono::milliseconds;

constexpr uint64_t kRegion = 9;

bool AnswersWithin(const std::function<bool()>& probe) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (probe()) return true;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return false;
}

// A port that accepts connections and never answers: a write to it waits
// out the replicator's timeout, then completes on the replication thread.
class SilentPort {
 public:
  SilentPort() {
    EXPECT_TRUE(channel::Listen("127.0.0.1", 0, &socket_, &port_).ok());
  }
  ~SilentPort() {
    if (socket_ >= 0) ::close(socket_);
  }
  uint16_t port() const { return port_; }

 private:
  int socket_ = -1;
  uint16_t port_ = 0;
};

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
  EXPECT_TRUE(replicator.Probe()) << "the first probe has nothing to answer";
  for (int round = 0; round < 3; ++round) {
    EXPECT_TRUE(AnswersWithin([&] { return replicator.Probe(); })) << round;
  }
}

TEST(ReplicatorProbeTest, AThreadStuckInATurnAnswersNoProbeUntilItComesRound) {
  SilentPort backup;
  Replicator replicator(Options());
  ASSERT_TRUE(replicator.Probe());
  replicator.Open(kRegion, 1, {{"127.0.0.1", backup.port()}},
                  ReplicationMode::kBuildIndex);
  std::mutex mutex;
  std::condition_variable changed;
  bool entered = false;
  bool released = false;
  replicator.Write(
      kRegion, {RecordType::kPut, "key", "value"}, /*region=*/nullptr,
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
  EXPECT_TRUE(AnswersWithin([&] { return replicator.Probe(); }));
}

}  // namespace
}  // namespace kvs::replication
