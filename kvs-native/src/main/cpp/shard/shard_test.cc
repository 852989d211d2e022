// The shard loop: posted tasks run on its thread, and the watchdog's probe
// (Shard::Probe) is answered while the loop comes round and not while a
// turn is stuck.

#include "shard/shard.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "testing/eventually.h"

namespace kvs::shard {
namespace {

using std::chrono::milliseconds;

// A task that blocks its thread until Release.
class Gate {
 public:
  void Enter() {
    std::unique_lock<std::mutex> lock(mutex_);
    entered_ = true;
    changed_.notify_all();
    changed_.wait(lock, [this] { return released_; });
  }
  bool AwaitEntered() {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(10),
                             [this] { return entered_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool entered_ = false;
  bool released_ = false;
};

TEST(ShardTest, PostedTasksRunOnTheShardsThread) {
  Shard shard(3);
  ASSERT_TRUE(shard.Start().ok());
  std::mutex mutex;
  std::condition_variable done;
  bool ran = false;
  bool on_shard = false;
  shard.Post([&] {
    std::lock_guard<std::mutex> lock(mutex);
    on_shard = shard.OnShard() && Shard::Current() == &shard;
    ran = true;
    done.notify_all();
  });
  std::unique_lock<std::mutex> lock(mutex);
  ASSERT_TRUE(
      done.wait_for(lock, std::chrono::seconds(10), [&] { return ran; }));
  EXPECT_TRUE(on_shard);
  EXPECT_FALSE(shard.OnShard()) << "this thread is not the shard's";
}

TEST(ShardTest, AnIdleShardAnswersEveryProbe) {
  Shard shard(0);
  ASSERT_TRUE(shard.Start().ok());
  EXPECT_TRUE(shard.Probe()) << "the first probe has nothing to answer";
  for (int round = 0; round < 3; ++round) {
    // Blocked in epoll_wait, the shard wakes for the probe and runs it.
    EXPECT_TRUE(testing::Eventually([&] { return shard.Probe(); })) << round;
  }
}

TEST(ShardTest, AShardStuckInATurnAnswersNoProbeUntilItComesRound) {
  Shard shard(0);
  ASSERT_TRUE(shard.Start().ok());
  ASSERT_TRUE(shard.Probe());
  ASSERT_TRUE(testing::Eventually([&] { return shard.Probe(); }));
  Gate gate;
  shard.Post([&] { gate.Enter(); });
  ASSERT_TRUE(gate.AwaitEntered());
  // The probe sent before it got stuck may have run; none sent after can.
  (void)shard.Probe();
  for (int round = 0; round < 5; ++round) {
    std::this_thread::sleep_for(milliseconds(20));
    EXPECT_FALSE(shard.Probe()) << "round " << round;
  }
  gate.Release();
  EXPECT_TRUE(testing::Eventually([&] { return shard.Probe(); }));
}

}  // namespace
}  // namespace kvs::shard
